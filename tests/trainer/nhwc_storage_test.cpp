/*
 * nhwc_storage_test.cpp — activations kept channels-last between layers (storage_plan.h): the
 * plan's rules, and whole networks on the CPU backend keeping bf16 or fp32 NHWC activations
 * through the reference ops (trainer/backend/nhwc_reference.h), against the same networks in
 * fp32 NCHW.
 *
 * A network in bf16 storage rounds each kept activation and gradient to 8 bits of mantissa, so its
 * numbers are near the fp32 network's, not equal; in fp32 NHWC the reference only transposes, so
 * its numbers equal the fp32 network's bit for bit. A tensor read in the wrong layout (NHWC as
 * NCHW) or the wrong storage gives numbers nowhere near, which is what these comparisons catch.
 * The CUDA kernels are compared with the same reference on the GPU (tests/trainer/cuda).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/check.h"
#include "gradcheck.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/layer.h"
#include "trainer/layers/residual.h"
#include "trainer/layers/storage_plan.h"
#include "trainer/models.h"
#include "trainer/network.h"

namespace sweep::trainer {
namespace {

using testing::random_vector;
using testing::to_float;

constexpr Storage F = Storage::fp32_nchw, B = Storage::bf16_nhwc, H = Storage::fp32_nhwc;
constexpr NhwcRole none = NhwcRole::none, pass = NhwcRole::passthrough, reads = NhwcRole::reads,
                   writes = NhwcRole::writes, rw = NhwcRole::reads_writes;

// The plan with bf16 NHWC as the channels-last storage.
std::vector<Storage> plan_storage(const std::vector<NhwcRole>& roles, Storage in, Storage out) {
  return trainer::plan_storage(roles, B, in, out);
}

TEST(StoragePlan, ChainsEndingInABf16ReaderAreBf16) {
  // conv(1 -> 8) bn relu pool | conv bn relu pool | conv bn relu | gap dense
  EXPECT_EQ(
      plan_storage({writes, pass, pass, pass, rw, pass, pass, pass, rw, pass, pass, reads, none}, F,
                   F),
      (std::vector<Storage>{B, B, B, B, B, B, B, B, B, B, B, F, F}));
  // An fp32-only first convolution (fewer than 8 filters) keeps its block in fp32.
  EXPECT_EQ(plan_storage({none, pass, pass, rw, pass, reads}, F, F),
            (std::vector<Storage>{F, F, F, B, B, F}));
  // A chain that ends in an fp32-only layer (a flatten) or at the list's fp32 end stays fp32.
  EXPECT_EQ(plan_storage({rw, pass, pass, none, none}, F, F),
            (std::vector<Storage>{F, F, F, F, F}));
  EXPECT_EQ(plan_storage({rw, pass, rw, pass}, F, F), (std::vector<Storage>{B, B, F, F}));
  // A residual block's F: bf16 in, bf16 out; its own convolutions write bf16.
  EXPECT_EQ(plan_storage({rw, pass, pass, rw, pass}, B, B), (std::vector<Storage>{B, B, B, B, B}));
  // No convolution: the input's storage flows through.
  EXPECT_EQ(plan_storage({pass, pass}, B, B), (std::vector<Storage>{B, B}));
  EXPECT_EQ(plan_storage({}, F, F), std::vector<Storage>{});
}

TEST(StoragePlan, ImpossibleDemandsAreRefused) {
  EXPECT_THROW(plan_storage({none}, B, F), Error);        // bf16 into an fp32-only layer
  EXPECT_THROW(plan_storage({pass, pass}, F, B), Error);  // nothing writes the bf16 end
  EXPECT_THROW(plan_storage({rw, reads}, F, B), Error);   // the reader writes fp32
  EXPECT_THROW(plan_storage({writes}, B, B), Error);      // it reads fp32 only
}

TEST(StoragePlan, TheChannelsLastStorageIsTheBackends) {
  EXPECT_EQ(trainer::plan_storage({writes, pass, rw, pass, reads}, H, F, F),
            (std::vector<Storage>{H, H, H, H, F}));
  // A list's end kept in another channels-last type than the plan's is refused.
  EXPECT_THROW(trainer::plan_storage({rw, pass}, H, B, B), Error);
}

ModelSpec convnet(int width, int depth) {
  ModelSpec m;
  m.preset = Preset::convnet;
  m.net_width = width;
  m.block_depth = depth;
  return m;
}

ModelSpec resnet(int depth) {
  ModelSpec m;
  m.preset = Preset::resnet;
  m.depth = depth;
  return m;
}

std::vector<Storage> outputs_of(const Network& net) {
  std::vector<Storage> s;
  for (const auto& layer : net.layers()) s.push_back(layer->out_storage());
  return s;
}

// Largest |a - b| relative to the largest |b|.
double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  double gap = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return scale > 0 ? gap / scale : gap;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

// Trains one step of `model` twice from the same weights, in fp32 NCHW and keeping channels-last
// activations in storage s, and compares logits (training and inference), every gradient and the
// running statistics: near in bf16, equal in fp32 NHWC. Returns the second network's storage
// plan.
std::vector<Storage> expect_nhwc_storage_near_fp32(const ModelSpec& model, Shape in, Storage s) {
  const int batch = 6, classes = 5;
  CpuBackend fp32(1), nhwc(1);
  nhwc.set_nhwc_storage(s);
  Network a(fp32, model, in, classes, batch, 3);
  Network b(nhwc, model, in, classes, batch, 3);
  const bool exact = s == Storage::fp32_nhwc;
  std::mt19937_64 rng(11);
  const auto x = to_float(random_vector(std::size_t(batch) * std::size_t(in.numel()), rng));
  const auto d = to_float(random_vector(std::size_t(batch) * classes, rng));
  for (bool training : {false, true}) {  // training last: backward follows it
    const float* la = a.forward(x.data(), batch, training);
    const float* lb = b.forward(x.data(), batch, training);
    const std::vector<float> va(la, la + batch * classes), vb(lb, lb + batch * classes);
    if (exact) {
      EXPECT_EQ(va, vb) << (training ? "training" : "inference") << " logits";
    } else {
      EXPECT_LT(relative_gap(vb, va), 0.05) << (training ? "training" : "inference") << " logits";
      EXPECT_NE(va, vb) << "no activation was rounded to bf16";
    }
  }
  a.backward(d.data(), batch);
  b.backward(d.data(), batch);
  const std::vector<float> ga(a.grads(), a.grads() + a.param_count()),
      gb(b.grads(), b.grads() + b.param_count());
  // Per layer, the gradient's direction: bf16 rounding at every layer moves a deep net's
  // gradients by tens of percent at these tiny sizes (so does a 0.4% change of the input in
  // fp32: 21% for ResNet-20 here), but keeps their direction (cosine 0.93 and up); a
  // tensor read in the wrong layout or storage scrambles it (cosine near 0).
  std::size_t offset = 0;
  for (const auto& layer : a.layers()) {
    const std::size_t n = layer->param_count();
    if (n) {
      const std::vector<float> la(ga.begin() + offset, ga.begin() + offset + n),
          lb(gb.begin() + offset, gb.begin() + offset + n);
      if (exact)
        EXPECT_EQ(la, lb) << layer->describe() << "'s gradient";
      else
        EXPECT_GT(cosine(la, lb), 0.8) << layer->describe() << "'s gradient";
    }
    offset += n;
  }
  // The running statistics, updated from bf16 activations.
  const std::vector<float> sa(a.state(), a.state() + a.state_count()),
      sb(b.state(), b.state() + b.state_count());
  if (exact)
    EXPECT_EQ(sa, sb) << "running statistics";
  else
    EXPECT_LT(relative_gap(sb, sa), 0.02) << "running statistics";
  EXPECT_EQ(outputs_of(a), std::vector<Storage>(a.layers().size(), F));
  return outputs_of(b);
}

// Each network test in both channels-last types; S: the one under test.
class NhwcStorage : public ::testing::TestWithParam<Storage> {
 protected:
  const Storage S = GetParam();
};

// The conv-block net: the first convolution reads the one-channel input in fp32 and writes
// channels-last; every tensor from there up to the global average pool is channels-last.
TEST_P(NhwcStorage, ConvBlockNetIsNearItsFp32Self) {
  const std::vector<Storage> plan =
      expect_nhwc_storage_near_fp32(convnet(8, 1), Shape{1, 12, 12}, S);
  // conv bn relu pool | conv bn relu pool | conv bn relu | gap dense
  EXPECT_EQ(plan, (std::vector<Storage>{S, S, S, S, S, S, S, S, S, S, S, F, F}));
}

// ResNet-20: the stem reads 3 channels in fp32 and writes channels-last; every block (identity and
// projection shortcuts) keeps channels-last, the global average pool reads it.
TEST_P(NhwcStorage, ResNetIsNearItsFp32Self) {
  const std::vector<Storage> plan = expect_nhwc_storage_near_fp32(resnet(20), Shape{3, 8, 8}, S);
  ASSERT_EQ(plan.size(), 3u + 9u + 2u);
  for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(plan[i], S) << "layer " << i + 1;
  EXPECT_EQ(plan[12], F);
}

// Blocks whose shortcut is a projection while F holds no convolution pass their input's storage
// on; a block with an fp32-only layer (an average pool) is fp32 at its ends, while its own
// convolutions inside keep channels-last between them.
TEST_P(NhwcStorage, ResidualBlocksOfEveryKind) {
  const auto layer = [](LayerKind kind, std::map<std::string, double> num = {},
                        std::map<std::string, std::string> str = {}) {
    return LayerSpec{kind, std::move(num), std::move(str)};
  };
  const auto conv = [&](int filters) {
    return layer(LayerKind::conv, {{"filters", filters}, {"kernel", 3}, {"bias", 0}},
                 {{"padding", "same"}});
  };
  const auto block = [&](std::vector<LayerSpec> inner) {
    LayerSpec b = layer(LayerKind::residual, {}, {{"activation", "relu"}});
    b.layers = std::move(inner);
    return b;
  };
  const LayerSpec bn = layer(LayerKind::batchnorm), relu = layer(LayerKind::relu),
                  maxpool = layer(LayerKind::maxpool, {{"size", 2}, {"stride", 2}}),
                  avgpool = layer(LayerKind::avgpool, {{"size", 2}, {"stride", 2}});
  ModelSpec m;
  m.preset = Preset::none;
  m.layers = {conv(8),
              bn,
              block({conv(8), bn, relu, conv(8), bn, avgpool}),  // fp32 only (the average pool)
              conv(8),
              bn,
              block({maxpool}),                         // projection, no convolution: passthrough
              block({conv(8), bn, relu, conv(8), bn}),  // identity: passthrough
              conv(8),
              layer(LayerKind::gap),
              layer(LayerKind::dense, {{"units", 5}})};
  const std::vector<Storage> plan = expect_nhwc_storage_near_fp32(m, Shape{8, 8, 8}, S);
  EXPECT_EQ(plan, (std::vector<Storage>{F, F, F, S, S, S, S, S, F, F}));
}

// A convolution with a bias writes channels-last as one without does (the bias added
// channels-last).
TEST_P(NhwcStorage, ConvolutionsWithBiasKeepChannelsLast) {
  ModelSpec m;
  m.preset = Preset::none;
  const LayerSpec conv{LayerKind::conv, {{"filters", 8}, {"kernel", 3}}, {{"padding", "same"}}};
  m.layers = {conv, LayerSpec{LayerKind::relu, {}, {}}, conv, LayerSpec{LayerKind::gap, {}, {}},
              LayerSpec{LayerKind::dense, {{"units", 5}}, {}}};
  EXPECT_EQ(expect_nhwc_storage_near_fp32(m, Shape{3, 8, 8}, S),
            (std::vector<Storage>{S, S, S, F, F}));
}

// Inside the fp32-only block, the first convolution's output feeds the second: channels-last.
TEST_P(NhwcStorage, AnFp32BlockKeepsChannelsLastInside) {
  ModelSpec m;
  m.preset = Preset::none;
  LayerSpec conv{
      LayerKind::conv, {{"filters", 8}, {"kernel", 3}, {"bias", 0}}, {{"padding", "same"}}};
  LayerSpec block{LayerKind::residual, {}, {{"activation", "relu"}}};
  block.layers = {conv, LayerSpec{LayerKind::batchnorm, {}, {}}, LayerSpec{LayerKind::relu, {}, {}},
                  conv, LayerSpec{LayerKind::avgpool, {{"size", 2}, {"stride", 2}}, {}}};
  m.layers = {block, LayerSpec{LayerKind::dense, {{"units", 5}}, {}}};
  CpuBackend cpu(1);
  cpu.set_nhwc_storage(S);
  Network net(cpu, m, Shape{8, 6, 6}, 5, 2, 1);
  const auto& body = dynamic_cast<const Residual&>(*net.layers()[0]).body();
  std::vector<Storage> inside;
  for (const auto& layer : body) inside.push_back(layer->out_storage());
  EXPECT_EQ(inside, (std::vector<Storage>{S, S, S, F, F}));
  EXPECT_EQ(net.layers()[0]->out_storage(), F);
  expect_nhwc_storage_near_fp32(m, Shape{8, 6, 6}, S);
}

INSTANTIATE_TEST_SUITE_P(BothTypes, NhwcStorage,
                         ::testing::Values(Storage::bf16_nhwc, Storage::fp32_nhwc),
                         [](const ::testing::TestParamInfo<Storage>& param) {
                           return is_bf16(param.param) ? "bf16" : "fp32";
                         });

}  // namespace
}  // namespace sweep::trainer
