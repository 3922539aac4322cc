/*
 * cuda_overlap_test.cpp — weight gradients on the side stream (cuda_side_stream.cu) change when
 * work runs, never what it computes: training steps with the overlap on give exactly the
 * parameters of the same steps with it off, eager and replayed from a captured graph, for LeNet,
 * a dense net on cuBLAS, residual networks (whose ping-pong gradient buffers are rewritten while
 * a queued weight gradient may still read them) and with each of our convolution kernels forced
 * on. Both backends are deterministic, so the same algorithms run on both and equality is exact.
 * And a capture abandoned after the side stream forked leaves the backend usable.
 */
#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/network.h"

namespace sweep::trainer::test {
namespace {

constexpr int kBatch = 32, kClasses = 10, kEagerSteps = 2, kReplays = 4;

LayerSpec layer(LayerKind kind, std::map<std::string, double> num = {},
                std::map<std::string, std::string> str = {}) {
  return LayerSpec{kind, std::move(num), std::move(str)};
}

struct Case {
  std::string name;
  ModelSpec model;
  Shape input;
};

std::vector<Case> cases() {
  ModelSpec lenet;
  lenet.preset = Preset::lenet;
  ModelSpec mlp;  // 784 -> 300 -> 100 -> 10: the first two on cuBLAS, not the skinny kernels
  mlp.preset = Preset::none;
  mlp.layers = {layer(LayerKind::dense, {{"units", 300}}), layer(LayerKind::relu),
                layer(LayerKind::dense, {{"units", 100}}), layer(LayerKind::relu),
                layer(LayerKind::dense, {{"units", kClasses}})};
  const LayerSpec bn = layer(LayerKind::batchnorm), relu = layer(LayerKind::relu);
  const auto conv = [](int filters, int stride) {
    return layer(
        LayerKind::conv,
        {{"filters", filters}, {"kernel", 3}, {"stride", stride}, {"padding", 1}, {"bias", 0}});
  };
  const auto block = [](std::vector<LayerSpec> inner, const char* activation) {
    LayerSpec b = layer(LayerKind::residual, {}, {{"activation", activation}});
    b.layers = std::move(inner);
    return b;
  };
  ModelSpec custom;  // an identity and a projection shortcut, a block inside a block
  custom.preset = Preset::none;
  custom.layers = {conv(8, 1),
                   bn,
                   relu,
                   block({conv(8, 1), bn, relu, conv(8, 1), bn}, "relu"),
                   block({conv(16, 2), bn, relu, block({conv(16, 1), bn}, "none")}, "relu"),
                   layer(LayerKind::gap),
                   layer(LayerKind::dense, {{"units", kClasses}})};
  ModelSpec resnet8;
  resnet8.preset = Preset::resnet;
  resnet8.depth = 8;
  return {{"lenet", lenet, {1, 28, 28}},
          {"mlp", mlp, {1, 28, 28}},
          {"residual blocks", custom, {3, 16, 16}},
          {"resnet depth 8", resnet8, {3, 16, 16}}};
}

// One network on its own backend, a fixed batch, and the step the training loop runs.
struct Trainee {
  Trainee(bool overlap, cuda::CudaBackend::DirectConv direct, const Case& c,
          const std::vector<float>& x_host, const std::vector<std::int32_t>& y_host)
      : gpu(make_gpu(overlap, direct)),
        net(*gpu, c.model, c.input, kClasses, kBatch, 11),
        x(*gpu, x_host.size() * 4),
        y(*gpu, y_host.size() * 4),
        dl(*gpu, kBatch * kClasses * 4),
        stats(*gpu, 16),
        v(*gpu, net.param_count() * 4) {
    gpu->copy_to_device(x.as<void>(), x_host.data(), x_host.size() * 4);
    gpu->copy_to_device(y.as<void>(), y_host.data(), y_host.size() * 4);
  }
  static std::unique_ptr<cuda::CudaBackend> make_gpu(bool overlap,
                                                     cuda::CudaBackend::DirectConv direct) {
    auto g = std::make_unique<cuda::CudaBackend>(0, cuda::MathMode::fp32, /*deterministic=*/true);
    g->set_overlap_weight_gradients(overlap);
    g->set_direct_conv(direct);
    return g;
  }
  void forward_backward() {
    const float* logits = net.forward(x.f(), kBatch, true);
    gpu->softmax_cross_entropy(logits, y.as<std::int32_t>(), kBatch, kClasses, dl.f(),
                               stats.as<double>());
    net.backward(dl.f(), kBatch);
  }
  void step(int i) {
    forward_backward();
    gpu->optimizer_step(sgdm_step(i), net.params(), net.grads(), v.f(), nullptr, net.param_count(),
                        nullptr);
  }
  // kEagerSteps eager steps, then one recorded and kReplays replays of it.
  void train() {
    for (int i = 0; i < kEagerSteps; ++i) step(i);
    gpu->begin_capture();
    step(kEagerSteps);  // recorded, not run
    gpu->end_capture();
    for (int i = 0; i < kReplays; ++i)
      gpu->replay(sgdm_step(kEagerSteps + i), std::uint64_t(kEagerSteps + i), 0);
  }
  std::vector<float> params() {
    std::vector<float> p(net.param_count());
    gpu->copy_to_host(p.data(), net.params(), p.size() * 4);
    return p;
  }
  std::unique_ptr<cuda::CudaBackend> gpu;
  Network net;
  DeviceBuffer x, y, dl, stats, v;
};

void batch_for(const Case& c, std::vector<float>& x, std::vector<std::int32_t>& y) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  x.resize(std::size_t(kBatch) * c.input.numel());
  for (auto& v : x) v = d(rng);
  y.resize(kBatch);
  for (auto& l : y) l = static_cast<std::int32_t>(rng() % kClasses);
}

std::size_t count_different(const std::vector<float>& a, const std::vector<float>& b) {
  std::size_t bad = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) ++bad;
  return bad;
}

TEST(CudaOverlap, WeightGradientsBesideDataGradientsGiveTheSameSteps) {
  SWEEP_SKIP_WITHOUT_CUDA();
  using DC = cuda::CudaBackend::DirectConv;
  for (const Case& c : cases()) {
    for (DC direct : {DC::never, DC::always, DC::tiled}) {
      const std::string tag = c.name + (direct == DC::never    ? ", cuDNN"
                                        : direct == DC::always ? ", direct"
                                                               : ", tiled");
      std::vector<float> x;
      std::vector<std::int32_t> y;
      batch_for(c, x, y);
      Trainee with(true, direct, c, x, y), without(false, direct, c, x, y);
      with.train();
      without.train();
      const std::vector<float> a = with.params(), b = without.params();
      ASSERT_EQ(a.size(), b.size()) << tag;
      EXPECT_EQ(count_different(a, b), 0u)
          << tag << ": of " << a.size() << " parameters differ with the overlap on and off";
      if (c.name != "lenet") break;  // one convolution choice for the others: cuDNN's
    }
  }
}

// An op throws after the side stream forked into the capture: drop_graph must join it back and
// end the capture, so that eager steps and a new recording work and still give the same numbers.
TEST(CudaOverlap, ACaptureAbandonedAfterTheForkLeavesTheBackendUsable) {
  SWEEP_SKIP_WITHOUT_CUDA();
  const Case c = cases().front();  // LeNet
  std::vector<float> x;
  std::vector<std::int32_t> y;
  batch_for(c, x, y);
  Trainee with(true, cuda::CudaBackend::DirectConv::never, c, x, y);
  Trainee without(false, cuda::CudaBackend::DirectConv::never, c, x, y);
  with.step(0);
  without.step(0);
  with.gpu->begin_capture();
  with.forward_backward();  // forks the side stream inside the capture
  with.gpu->drop_graph();   // as the loop does when an op throws mid-capture
  EXPECT_FALSE(with.gpu->has_graph());
  with.train();
  without.train();
  EXPECT_EQ(count_different(with.params(), without.params()), 0u);
}

}  // namespace
}  // namespace sweep::trainer::test
