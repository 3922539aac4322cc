/*
 * golden_test.cpp — our Network on the CPU backend against numbers dumped from PyTorch 1.13.
 *
 * tests/golden/make_golden.py builds LeNet, a small convnet with batch norm and a small residual
 * net (an identity and a projection shortcut) in PyTorch, sets their weights, and records logits,
 * loss, every parameter gradient, the batch-norm running statistics, and ten steps of SGD-momentum
 * (lr 0.01, momentum 0.9, weight decay 5e-4) and Adam (lr 1e-3) on a fixed batch sequence. Here the
 * same weights (stored exactly, as float16) go into our flat parameter buffer in our documented
 * layout, and every number must match. The optimizer steps go through Backend::optimizer_step
 * directly, so this pins the layer math, the layout, the loss and the optimizer formulas to
 * PyTorch's at once. mlp_regression does the same for a regression MLP (one output, float
 * targets, nn.MSELoss against Backend::mean_squared_error); its file is made where torch is
 * (make_golden.py mlp_regression) and the case is skipped, saying so, until it is committed.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gradcheck.h"
#include "lenet_config.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/network.h"

namespace sweep::trainer {
namespace {

using testing::all_close;

struct GoldTensor {
  int stride = 1;
  std::vector<int> dims;
  std::vector<float> values;  // every stride-th value of the tensor
};

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const int exponent = (h >> 10) & 0x1f;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  std::uint32_t bits;
  if (exponent == 31)
    bits = sign | 0x7f800000u | (mantissa << 13);
  else
    bits = sign | (std::uint32_t(exponent - 15 + 127) << 23) | (mantissa << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::map<std::string, GoldTensor> load_gold(const std::string& name) {
  const std::string path = std::string(SWEEP_SOURCE_DIR) + "/tests/golden/" + name + ".gold";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path + " (run tests/golden/make_golden.py)");
  std::string line;
  std::getline(in, line);
  if (line != "sweep-golden 1") throw std::runtime_error(path + ": not a golden file");
  std::map<std::string, GoldTensor> out;
  while (std::getline(in, line)) {
    std::istringstream header(line);
    std::string tensor_name, dtype;
    std::size_t count = 0;
    GoldTensor t;
    header >> tensor_name >> dtype >> t.stride >> count;
    for (int d; header >> d;) t.dims.push_back(d);
    t.values.resize(count);
    if (dtype == "f4") {
      in.read(reinterpret_cast<char*>(t.values.data()), std::streamsize(count * 4));
    } else {
      std::vector<std::uint16_t> halves(count);
      in.read(reinterpret_cast<char*>(halves.data()), std::streamsize(count * 2));
      for (std::size_t i = 0; i < count; ++i) t.values[i] = half_to_float(halves[i]);
    }
    if (!in) throw std::runtime_error(path + ": truncated at " + tensor_name);
    out.emplace(tensor_name, std::move(t));
  }
  return out;
}

std::size_t numel(const GoldTensor& t) {
  std::size_t n = 1;
  for (int d : t.dims) n *= std::size_t(d);
  return n;
}

std::string gold_path(const std::string& name) {
  return std::string(SWEEP_SOURCE_DIR) + "/tests/golden/" + name + ".gold";
}

struct GoldenCase {
  const char* file;
  ModelSpec model;
  Shape input;
  double logit_tol, grad_tol, loss_tol;
  bool regression = false;  // one output, "targets", mean squared error
};

ModelSpec mlp_regression_spec() {
  ModelSpec m;
  m.preset = Preset::mlp;
  m.hidden = {16};
  return m;
}

ModelSpec convnet_spec() {
  ModelSpec m;
  m.preset = sweep::trainer::Preset::convnet;
  m.net_width = 4;
  m.block_depth = 1;
  return m;
}

// make_golden.py's resnet_small(): conv-bn-relu, a block with an identity shortcut, a block
// with a stride-2 projection, gap, dense. Its parameter order is the Residual layer's layout.
ModelSpec resnet_small_spec() {
  auto layer = [](LayerKind kind, std::map<std::string, double> num = {}) {
    return LayerSpec{kind, std::move(num), {}};
  };
  auto conv_bn = [&](int filters, int stride) {
    return std::vector<LayerSpec>{
        layer(
            LayerKind::conv,
            {{"filters", filters}, {"kernel", 3}, {"stride", stride}, {"padding", 1}, {"bias", 0}}),
        layer(LayerKind::batchnorm)};
  };
  auto block = [&](int filters, int stride) {
    LayerSpec b = layer(LayerKind::residual);
    b.layers = conv_bn(filters, stride);
    b.layers.push_back(layer(LayerKind::relu));
    for (LayerSpec& l : conv_bn(filters, 1)) b.layers.push_back(l);
    return b;
  };
  ModelSpec m;
  m.preset = Preset::none;
  m.layers = conv_bn(4, 1);
  m.layers.push_back(layer(LayerKind::relu));
  m.layers.push_back(block(4, 1));
  m.layers.push_back(block(8, 2));
  m.layers.push_back(layer(LayerKind::gap));
  m.layers.push_back(layer(LayerKind::dense, {{"units", 10}}));
  return m;
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesPyTorch) {
  const GoldenCase& c = GetParam();
  if (c.regression && !std::filesystem::exists(gold_path(c.file)))
    GTEST_SKIP() << gold_path(c.file) << " is not made yet: run tests/golden/make_golden.py "
                 << c.file << " where torch is";
  auto gold = load_gold(c.file);
  const int batch = 8, classes = c.regression ? 1 : 10, steps = 10;
  CpuBackend cpu(2);
  Network net(cpu, c.model, c.input, c.regression ? 0 : classes, batch, 1);

  // Parameters in our layout: per layer, weight then bias — PyTorch's parameters() order.
  std::vector<float> initial;
  std::vector<std::size_t> offsets;
  for (int i = 0; gold.count("param" + std::to_string(i)); ++i) {
    const auto& p = gold.at("param" + std::to_string(i)).values;
    offsets.push_back(initial.size());
    initial.insert(initial.end(), p.begin(), p.end());
  }
  ASSERT_EQ(initial.size(), net.param_count());
  const std::vector<float> initial_state(net.state(), net.state() + net.state_count());

  const auto& inputs = gold.at("inputs").values;
  std::vector<std::int32_t> labels;
  if (!c.regression)
    for (float v : gold.at("labels").values) labels.push_back(static_cast<std::int32_t>(v));
  const std::vector<float> targets =
      c.regression ? gold.at("targets").values : std::vector<float>{};
  // Batch s's loss: cross-entropy over its labels, or the mean squared error over its targets.
  const auto loss = [&](const float* out, int s, float* d, double* st) {
    if (c.regression)
      cpu.mean_squared_error(out, targets.data() + s * batch, batch, d, st, batch);
    else
      cpu.softmax_cross_entropy(out, labels.data() + s * batch, batch, classes, d, st);
  };
  const std::size_t sample = std::size_t(c.input.numel());
  ASSERT_EQ(inputs.size(), std::size_t(steps) * batch * sample);

  // ---- one training forward/backward on batch 0
  std::copy(initial.begin(), initial.end(), net.params());
  std::vector<float> dlogits(batch * classes);
  double stats[2] = {0, 0};
  const float* logits = net.forward(inputs.data(), batch, true);
  EXPECT_TRUE(all_close(logits, gold.at("logits").values.data(), batch * classes, c.logit_tol,
                        c.logit_tol));
  loss(logits, 0, dlogits.data(), stats);
  EXPECT_NEAR(stats[0] / batch, gold.at("loss").values[0], c.loss_tol);
  net.backward(dlogits.data(), batch);
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const GoldTensor& g = gold.at("grad" + std::to_string(i));
    std::vector<float> ours;
    for (std::size_t j = 0; j < numel(g); j += g.stride)
      ours.push_back(net.grads()[offsets[i] + j]);
    EXPECT_TRUE(all_close(ours, g.values, c.grad_tol, 1e-3)) << "gradient of parameter " << i;
  }
  std::size_t state_at = 0;
  for (int j = 0; gold.count("running_mean" + std::to_string(j)); ++j) {
    for (const char* what : {"running_mean", "running_var"}) {
      const auto& expect = gold.at(what + std::to_string(j)).values;
      EXPECT_TRUE(all_close(net.state() + state_at, expect.data(), expect.size(), 1e-6, 1e-5))
          << what << j;
      state_at += expect.size();
    }
  }
  EXPECT_EQ(state_at, net.state_count());

  // ---- ten optimizer steps from the same start, then an inference forward
  for (const char* opt : {"sgdm", "adam"}) {
    OptimizerStep step;
    if (std::string(opt) == "sgdm") {
      step.kind = OptimizerKind::sgdm;
      step.lr = 0.01f;
      step.momentum = 0.9f;
      step.weight_decay = 5e-4f;
    } else {
      step.kind = OptimizerKind::adam;
      step.lr = 1e-3f;
    }
    std::copy(initial.begin(), initial.end(), net.params());
    std::copy(initial_state.begin(), initial_state.end(), net.state());
    std::vector<float> m1(net.param_count(), 0.f), m2(net.param_count(), 0.f);
    const auto& expect = gold.at(std::string(opt) + "_losses").values;
    for (int s = 0; s < steps; ++s) {
      double st[2] = {0, 0};
      const float* out = net.forward(inputs.data() + std::size_t(s) * batch * sample, batch, true);
      loss(out, s, dlogits.data(), st);
      EXPECT_NEAR(st[0] / batch, expect[s], c.loss_tol * (1 + s)) << opt << " step " << s + 1;
      net.backward(dlogits.data(), batch);
      step.t = s + 1;
      cpu.optimizer_step(step, net.params(), net.grads(), m1.data(), m2.data(), net.param_count(),
                         nullptr);
    }
    const float* eval = net.forward(inputs.data(), batch, false);
    EXPECT_TRUE(all_close(eval, gold.at(std::string(opt) + "_eval_logits").values.data(),
                          batch * classes, 10 * c.logit_tol, 10 * c.logit_tol))
        << opt << " inference logits after 10 steps";
  }
}

INSTANTIATE_TEST_SUITE_P(
    PyTorch, Golden,
    ::testing::Values(GoldenCase{"lenet", test::lenet_model(), Shape{1, 28, 28}, 2e-5, 2e-5, 2e-5},
                      GoldenCase{"convnet_bn", convnet_spec(), Shape{3, 16, 16}, 2e-5, 2e-5, 2e-5},
                      GoldenCase{"resnet_small", resnet_small_spec(), Shape{3, 8, 8}, 2e-5, 2e-5,
                                 2e-5},
                      GoldenCase{"mlp_regression", mlp_regression_spec(), Shape{12, 1, 1}, 2e-5,
                                 2e-5, 2e-5, true}),
    [](const ::testing::TestParamInfo<GoldenCase>& p) { return std::string(p.param.file); });

}  // namespace
}  // namespace sweep::trainer
