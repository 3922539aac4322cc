/*
 * cuda_residual_test.cpp — residual networks on the CUDA backend: the add op against the CPU's
 * (bit for bit, in place too), a residual network's forward and backward against the same network
 * on the CPU (logits, every parameter gradient in the flat layout, the running statistics, the
 * inference logits), and a training step with blocks captured in a CUDA graph and replayed equal
 * to the eager steps (a block allocates and synchronises nothing in forward / backward).
 */
#include <cmath>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/layers/layer.h"
#include "trainer/network.h"

namespace sweep::trainer::test {
namespace {

LayerSpec layer(LayerKind kind, std::map<std::string, double> num = {},
                std::map<std::string, std::string> str = {}) {
  return LayerSpec{kind, std::move(num), std::move(str)};
}
LayerSpec conv(int filters, int stride = 1) {
  return layer(
      LayerKind::conv,
      {{"filters", filters}, {"kernel", 3}, {"stride", stride}, {"padding", 1}, {"bias", 0}});
}
LayerSpec block(std::vector<LayerSpec> inner, const char* activation = "relu") {
  LayerSpec b = layer(LayerKind::residual, {}, {{"activation", activation}});
  b.layers = std::move(inner);
  return b;
}

// Both shortcuts, a block without activation, a block inside a block; and the preset.
std::vector<ModelSpec> models() {
  const LayerSpec bn = layer(LayerKind::batchnorm), relu = layer(LayerKind::relu);
  ModelSpec custom;
  custom.preset = Preset::none;
  custom.layers = {conv(8),
                   bn,
                   relu,
                   block({conv(8), bn, relu, conv(8), bn}),
                   block({conv(16, 2), bn, relu, block({conv(16), bn}, "none")}),
                   block({conv(16), bn}, "none"),
                   layer(LayerKind::gap),
                   layer(LayerKind::dense, {{"units", 10}})};
  ModelSpec resnet8;
  resnet8.preset = Preset::resnet;
  resnet8.depth = 8;
  return {custom, resnet8};
}

class CudaResidual : public CudaVsCpu {
 protected:
  // One training step of the same network on both backends: a random batch (and labels) drawn
  // here, the CPU's dlogits (from its own logits) into both backwards. Returns the input and both
  // training logits.
  struct Step {
    Twin x;
    std::vector<float> cpu_logits, gpu_logits;
  };
  Step train_step(Network& nc, Network& ng, Shape in, int batch, int classes) {
    Step s{twin_random(std::size_t(batch) * in.numel(), -2.f, 2.f), {}, {}};
    std::vector<std::int32_t> labels(batch);
    for (auto& l : labels) l = static_cast<std::int32_t>(rng() % classes);
    const std::size_t nl = std::size_t(batch) * classes;
    const float* lc = nc.forward(s.x.cf(), batch, true);
    const float* lg = ng.forward(s.x.gf(), batch, true);
    s.cpu_logits = host(*cpu, lc, nl);
    s.gpu_logits = host(*gpu, lg, nl);
    std::vector<float> dlogits(nl);
    double stats[2] = {0, 0};
    cpu->softmax_cross_entropy(lc, labels.data(), batch, classes, dlogits.data(), stats);
    auto dl = twin(dlogits);
    nc.backward(dl.cf(), batch);
    ng.backward(dl.gf(), batch);
    return s;
  }
};

TEST_F(CudaResidual, AddMatchesCpuBitForBitAndMayWriteInPlace) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{100003}}) {
    auto a = twin_random(n), b = twin_random(n, -1e3f, 1e3f), y = twin_out(n);
    cpu->add(a.cf(), b.cf(), y.cf(), n);
    gpu->add(a.gf(), b.gf(), y.gf(), n);
    expect_close(y, 0, 0, "add n=" + std::to_string(n));
    cpu->add(y.cf(), a.cf(), y.cf(), n);  // y += a
    gpu->add(y.gf(), a.gf(), y.gf(), n);
    expect_close(y, 0, 0, "add in place (first operand) n=" + std::to_string(n));
    cpu->add(b.cf(), y.cf(), y.cf(), n);  // y = b + y
    gpu->add(b.gf(), y.gf(), y.gf(), n);
    expect_close(y, 0, 0, "add in place (second operand) n=" + std::to_string(n));
  }
}

// Fixed inputs: a ReLU whose input lies within rounding of zero may fall on either side on the two
// backends (their convolutions sum in other orders), and the gradients behind it then differ in
// hundreds to thousands of parameters (a few % of one layer's gradient norm). With fresh random
// inputs about one run in ten has such a ReLU (the GPU's side decides it; other seeds agree to
// 1e-6); the next test covers random inputs with a norm bound.
TEST_F(CudaResidual, NetworkForwardBackwardMatchesCpu) {
  seed = 1;
  rng.seed(seed);
  const int batch = 16, classes = 10;
  const Shape in{3, 16, 16};
  for (const ModelSpec& model : models()) {
    const std::string tag = model.preset == Preset::resnet ? "resnet depth 8" : "custom blocks";
    Network nc(*cpu, model, in, classes, batch, 5), ng(*gpu, model, in, classes, batch, 5);
    ASSERT_EQ(nc.param_count(), ng.param_count());
    const std::size_t np = nc.param_count(), ns = nc.state_count();
    expect_close(host(*cpu, nc.params(), np), host(*gpu, ng.params(), np), 0, 0,
                 tag + " initial parameters");
    const Step step = train_step(nc, ng, in, batch, classes);
    const std::size_t nl = std::size_t(batch) * classes;
    expect_close(step.cpu_logits, step.gpu_logits, 1e-3, 1e-3, tag + " logits");
    expect_close(host(*cpu, nc.state(), ns), host(*gpu, ng.state(), ns), 1e-5, 1e-4,
                 tag + " running statistics");
    expect_close(host(*cpu, nc.grads(), np), host(*gpu, ng.grads(), np), 2e-4, 2e-3,
                 tag + " parameter gradients");

    const float* ic = nc.forward(step.x.cf(), batch, false);
    const float* ig = ng.forward(step.x.gf(), batch, false);
    expect_close(host(*cpu, ic, nl), host(*gpu, ig, nl), 1e-3, 1e-3, tag + " inference logits");
  }
}

// Random inputs: logits as above, and each layer's parameter gradient within 5% of the CPU's in
// norm (about 1e-6 without a ReLU on the edge, 0.4-1.8% with one; a tensor read in the wrong
// layout or a race gives errors of order 1).
TEST_F(CudaResidual, NetworkGradientsNearCpuOnRandomInputs) {
  const int batch = 16, classes = 10;
  const Shape in{3, 16, 16};
  for (const ModelSpec& model : models()) {
    Network nc(*cpu, model, in, classes, batch, 5), ng(*gpu, model, in, classes, batch, 5);
    const Step step = train_step(nc, ng, in, batch, classes);
    expect_close(step.cpu_logits, step.gpu_logits, 1e-3, 1e-3, "logits");
    const std::size_t np = nc.param_count();
    const auto gc = host(*cpu, nc.grads(), np), gg = host(*gpu, ng.grads(), np);
    std::size_t offset = 0;
    for (const auto& layer : nc.layers()) {
      const std::size_t n = layer->param_count();
      double diff = 0, norm = 0;
      for (std::size_t i = offset; i < offset + n; ++i) {
        diff += (double(gg[i]) - gc[i]) * (double(gg[i]) - gc[i]);
        norm += double(gc[i]) * gc[i];
      }
      if (n && norm > 0) {
        EXPECT_LT(std::sqrt(diff / norm), 0.05)
            << layer->describe() << "'s gradient (input seed " << seed << ")";
      }
      offset += n;
    }
  }
}

// Steps of SGD-momentum on a fixed batch, eager on one network and replayed from a captured graph
// on a second (the learning rate changes every step): the same numbers bit for bit. Deterministic
// algorithms, since the fastest weight gradients add with atomics in any order (with them, one
// run in a few has some 80 of 78,042 parameters past 1e-4 relative after 5 steps); the
// weight gradients still run on the side stream, whose ordering this checks.
TEST(CudaResidualGraph, ReplayedStepsEqualEagerSteps) {
  SWEEP_SKIP_WITHOUT_CUDA();
  constexpr int kBatch = 32, kSteps = 5, kClasses = 10;
  const Shape in{3, 16, 16};
  cuda::CudaBackend gpu(0, cuda::MathMode::fp32, /*deterministic=*/true);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<float> x(std::size_t(kBatch) * in.numel());
  for (auto& v : x) v = d(rng);
  std::vector<std::int32_t> labels(kBatch);
  for (auto& l : labels) l = static_cast<std::int32_t>(rng() % kClasses);

  struct Run {
    Run(Backend& b, const ModelSpec& m, const Shape& s)
        : net(b, m, s, kClasses, kBatch, 11),
          x(b, std::size_t(kBatch) * s.numel() * 4),
          y(b, kBatch * 4),
          dl(b, kBatch * kClasses * 4),
          stats(b, 16),
          v(b, net.param_count() * 4) {}
    Network net;
    DeviceBuffer x, y, dl, stats, v;
  };
  auto make = [&](const ModelSpec& m) {
    auto r = std::make_unique<Run>(gpu, m, in);
    gpu.copy_to_device(r->x.as<void>(), x.data(), x.size() * 4);
    gpu.copy_to_device(r->y.as<void>(), labels.data(), labels.size() * 4);
    return r;
  };
  auto step = [&](Run& r, int i) {
    const float* logits = r.net.forward(r.x.f(), kBatch, true);
    gpu.softmax_cross_entropy(logits, r.y.as<std::int32_t>(), kBatch, kClasses, r.dl.f(),
                              r.stats.as<double>());
    r.net.backward(r.dl.f(), kBatch);
    gpu.optimizer_step(sgdm_step(i), r.net.params(), r.net.grads(), r.v.f(), nullptr,
                       r.net.param_count(), nullptr);
  };
  for (const ModelSpec& model : models()) {
    auto eager = make(model);
    for (int i = 0; i < kSteps; ++i) step(*eager, i);

    auto graphed = make(model);
    step(*graphed, 0);  // warm-up: plans and workspaces for these shapes
    gpu.begin_capture();
    step(*graphed, 1);  // recorded, not run
    gpu.end_capture();
    ASSERT_TRUE(gpu.has_graph());
    for (int i = 1; i < kSteps; ++i) gpu.replay(sgdm_step(i), std::uint64_t(i), 0);
    gpu.drop_graph();

    const std::size_t n = eager->net.param_count();
    std::vector<float> a(n), b(n);
    gpu.copy_to_host(a.data(), eager->net.params(), n * 4);
    gpu.copy_to_host(b.data(), graphed->net.params(), n * 4);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) bad += a[i] != b[i];
    EXPECT_EQ(bad, 0u) << "of " << n << " parameters differ between eager and replayed steps";
  }
}

}  // namespace
}  // namespace sweep::trainer::test
