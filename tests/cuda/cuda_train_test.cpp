/*
 * cuda_train_test.cpp — the CUDA backend end to end: training against the CPU, memory returned
 * after every trial, out-of-memory as an exception the backend survives, and a captured CUDA
 * graph step equal to the eager one.
 *
 * The memory test takes its baseline after one warm-up trial, because the first trial in a
 * process loads cuDNN's and cuBLAS's kernels into the context, which stays for the process.
 */
#include <cuda_runtime.h>

#include <numeric>

#include "tests/cuda/cuda_test_util.h"
#include "trainer/network.h"
#include "trainer/train.h"

namespace sweep::trainer::test {
namespace {

TrainConfig synthetic_lenet(DeviceKind kind, int train_size, int test_size, int epochs,
                            int batch) {
  TrainConfig c;
  c.data.dataset = "synthetic";
  c.data.synthetic.train_size = train_size;
  c.data.synthetic.test_size = test_size;
  c.model.preset = "lenet";
  c.training.optimizer = "sgdm";
  c.training.learning_rate = 0.01;
  c.training.momentum = 0.9;
  c.training.weight_decay = 5e-4;
  c.training.batch_size = batch;
  c.training.epochs = epochs;
  c.training.seed = 7;
  c.device.kind = kind;
  c.device.index = 0;
  return c;
}

std::size_t free_bytes() {
  std::size_t free_b = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_b, &total), cudaSuccess);
  return free_b;
}

TEST(CudaTrain, MatchesCpuAccuracy) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  const TrainResult cpu = train(synthetic_lenet(DeviceKind::cpu, 2048, 2000, 2, 64), quiet);
  const TrainResult gpu = train(synthetic_lenet(DeviceKind::cuda, 2048, 2000, 2, 64), quiet);
  EXPECT_EQ(gpu.state, RunState::completed) << gpu.message;
  EXPECT_EQ(gpu.device.rfind("cuda:0", 0), 0u) << gpu.device;
  EXPECT_GT(cpu.final_val_accuracy, 0.3) << "the synthetic set must be learnable in 2 epochs";
  EXPECT_NEAR(gpu.final_val_accuracy, cpu.final_val_accuracy, 0.005)
      << "cpu " << cpu.final_val_accuracy << " cuda " << gpu.final_val_accuracy;
  EXPECT_NEAR(gpu.final_train_loss, cpu.final_train_loss, 0.02 + 0.02 * cpu.final_train_loss);
}

TEST(CudaTrain, FiftyTrialsGiveBackEveryByte) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  const TrainConfig cfg = synthetic_lenet(DeviceKind::cuda, 256, 64, 1, 32);
  train(cfg, quiet);  // warm-up: loads the libraries' kernels into the context
  const std::size_t baseline = free_bytes();
  constexpr std::size_t kSlack = std::size_t{16} << 20;
  for (int trial = 0; trial < 50; ++trial) {
    const TrainResult r = train(cfg, quiet);
    ASSERT_EQ(r.state, RunState::completed) << r.message;
    const std::size_t now = free_bytes();
    ASSERT_GE(now + kSlack, baseline)
        << "trial " << trial << " left " << ((baseline - now) >> 20) << " MiB behind";
  }
}

TEST(CudaTrain, OutOfMemoryThrowsAndBackendSurvives) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  std::size_t free_b = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total), cudaSuccess);
  const std::size_t ask = total * 2;
  try {
    gpu.allocate(ask);
    FAIL() << "allocating twice the device memory did not throw";
  } catch (const OutOfMemory& e) {
    EXPECT_EQ(e.bytes_asked(), ask);
    EXPECT_GT(e.bytes_free(), 0u);
    EXPECT_LE(e.bytes_free(), total);
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
  // Still usable: allocate, fill, read back.
  DeviceBuffer b(gpu, 4096);
  gpu.fill(b.f(), 1024, 3.f);
  std::vector<float> v(1024);
  gpu.copy_to_host(v.data(), b.as<void>(), 4096);
  EXPECT_EQ(v, std::vector<float>(1024, 3.f));
  // A backend made through the factory sees the same.
  auto via_factory = make_backend({DeviceKind::cuda, 0, 0});
  EXPECT_THROW(via_factory->allocate(ask), OutOfMemory);
}

TEST(CudaTrain, MissingDeviceIsAClearError) {
  SWEEP_SKIP_WITHOUT_CUDA();
  try {
    make_backend({DeviceKind::cuda, 999, 0});
    FAIL() << "device 999 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("999"), std::string::npos) << e.what();
  }
}

// One training step of LeNet with SGD-momentum, eager on one network and replayed from a captured
// graph on a second: learning rate, augmentation step and batch offset change every step. (SGD,
// not Adam: cuDNN's fastest weight-gradient algorithms add with atomics, and Adam's normalised
// step turns those last-bit differences into visible ones; Adam's replay is tested on its own.)
TEST(CudaGraph, ReplayedStepsEqualEagerSteps) {
  SWEEP_SKIP_WITHOUT_CUDA();
  constexpr int kBatch = 64, kSteps = 6, kRows = kBatch * kSteps;
  cuda::CudaBackend gpu(0);
  std::mt19937 rng(5);
  std::vector<std::uint8_t> images(std::size_t(kRows) * 28 * 28), labels(kRows);
  for (auto& v : images) v = static_cast<std::uint8_t>(rng() & 255);
  for (auto& v : labels) v = static_cast<std::uint8_t>(rng() % 10);
  std::vector<std::int32_t> order(kRows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  DeviceBuffer img(gpu, images.size()), lab(gpu, labels.size()), idx(gpu, order.size() * 4);
  gpu.copy_to_device(img.as<void>(), images.data(), images.size());
  gpu.copy_to_device(lab.as<void>(), labels.data(), labels.size());
  gpu.copy_to_device(idx.as<void>(), order.data(), order.size() * 4);

  ModelSpec model;  // lenet preset
  struct Run {
    Run(Backend& b, const ModelSpec& m)
        : net(b, m, Shape{1, 28, 28}, 10, kBatch, 11), x(b, kBatch * 784 * 4), y(b, kBatch * 4),
          dl(b, kBatch * 10 * 4), stats(b, 16), s1(b, net.param_count() * 4),
          s2(b, net.param_count() * 4) {}
    Network net;
    DeviceBuffer x, y, dl, stats, s1, s2;
  };
  auto make_run = [&] { return std::make_unique<Run>(gpu, model); };
  auto opt_for = [](int i) {
    OptimizerStep s;
    s.kind = OptimizerKind::sgdm;
    s.momentum = 0.9f;
    s.lr = 0.01f * float(1 + i % 3);
    s.weight_decay = 1e-4f;
    s.t = i + 1;
    return s;
  };
  auto step = [&](Run& r, int i) {
    GatherDesc d{};
    d.batch = kBatch;
    d.c = 1;
    d.h = d.w = 28;
    d.images = img.as<std::uint8_t>();
    d.labels = lab.as<std::uint8_t>();
    d.indices = idx.as<std::int32_t>() + i * kBatch;
    d.mean[0] = 0.3f;
    d.stdev[0] = 0.35f;
    d.flip = true;
    d.max_shift = 2;
    d.seed = 3;
    d.step = std::uint64_t(i);
    gpu.gather_batch(d, r.x.f(), r.y.as<std::int32_t>());
    const float* logits = r.net.forward(r.x.f(), kBatch, true);
    gpu.softmax_cross_entropy(logits, r.y.as<std::int32_t>(), kBatch, 10, r.dl.f(),
                              r.stats.as<double>());
    r.net.backward(r.dl.f(), kBatch);
    gpu.optimizer_step(opt_for(i), r.net.params(), r.net.grads(), r.s1.f(), r.s2.f(),
                       r.net.param_count(), nullptr);
  };

  auto eager = make_run();
  for (int i = 0; i < kSteps; ++i) step(*eager, i);

  auto graphed = make_run();
  step(*graphed, 0);  // warm-up: plans and workspaces for these shapes
  gpu.begin_capture();
  step(*graphed, 1);  // recorded, not run
  gpu.end_capture();
  ASSERT_TRUE(gpu.has_graph());
  for (int i = 1; i < kSteps; ++i)
    gpu.replay(opt_for(i), std::uint64_t(i), std::int64_t(i - 1) * kBatch);

  const std::size_t n = eager->net.param_count();
  std::vector<float> a(n), b(n);
  gpu.copy_to_host(a.data(), eager->net.params(), n * 4);
  gpu.copy_to_host(b.data(), graphed->net.params(), n * 4);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f + 1e-4f * std::fabs(a[i]))) ++bad;
  EXPECT_EQ(bad, 0u) << "of " << n << " parameters differ between eager and replayed steps";
  double sa[2], sb[2];
  gpu.copy_to_host(sa, eager->stats.as<void>(), 16);
  gpu.copy_to_host(sb, graphed->stats.as<void>(), 16);
  EXPECT_NEAR(sa[0], sb[0], 1e-3 * sa[0]) << "loss sums over the steps";
}

// Adam's per-step values (lr, t) come from the device block in a replay: a captured update
// replayed with t = 1..5 and changing lr equals five eager updates.
TEST(CudaGraph, ReplayedAdamReadsLrAndTFromTheStepBlock) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  constexpr std::size_t n = 10007;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> p(n), g(n);
  for (auto& v : p) v = d(rng);
  for (auto& v : g) v = d(rng);
  auto make = [&](const std::vector<float>& v) {
    DeviceBuffer b(gpu, n * 4);
    gpu.copy_to_device(b.as<void>(), v.data(), n * 4);
    return b;
  };
  DeviceBuffer pe = make(p), ge = make(g), m1 = DeviceBuffer(gpu, n * 4), v1 = DeviceBuffer(gpu, n * 4);
  DeviceBuffer pr = make(p), gr = make(g), m2 = DeviceBuffer(gpu, n * 4), v2 = DeviceBuffer(gpu, n * 4);
  auto opt = [](int t) {
    OptimizerStep s;
    s.kind = OptimizerKind::adam;
    s.lr = 0.01f / float(t);
    s.weight_decay = 1e-3f;
    s.t = t;
    return s;
  };
  for (int t = 1; t <= 5; ++t) gpu.optimizer_step(opt(t), pe.f(), ge.f(), m1.f(), v1.f(), n, nullptr);
  gpu.synchronize();
  gpu.begin_capture();
  gpu.optimizer_step(opt(99), pr.f(), gr.f(), m2.f(), v2.f(), n, nullptr);  // values ignored
  gpu.end_capture();
  for (int t = 1; t <= 5; ++t) gpu.replay(opt(t), 0, 0);
  std::vector<float> a(n), b(n);
  gpu.copy_to_host(a.data(), pe.as<void>(), n * 4);
  gpu.copy_to_host(b.data(), pr.as<void>(), n * 4);
  EXPECT_EQ(a, b) << "the same kernel with the same values must give the same bits";
}

TEST(CudaGraph, CaptureRefusesWhatCannotBeReplayed) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  DeviceBuffer x(gpu, 4096), y(gpu, 4096), m(gpu, 4096);
  gpu.begin_capture();
  EXPECT_THROW(gpu.allocate(1024), Error);
  EXPECT_THROW(gpu.dropout_forward(x.f(), y.f(), m.f(), 1024, 0.5f, 1, 0), Error);
  gpu.end_capture();
  // The backend still runs eager work afterwards.
  gpu.fill(x.f(), 1024, 1.f);
  std::vector<float> v(1024);
  gpu.copy_to_host(v.data(), x.as<void>(), 4096);
  EXPECT_EQ(v[1023], 1.f);
}

}  // namespace
}  // namespace sweep::trainer::test
