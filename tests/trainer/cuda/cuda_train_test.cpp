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

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/backend/tuning_cache.h"
#include "trainer/cuda/tuning_fingerprint.h"
#include "trainer/data/batch_source.h"
#include "trainer/data/synthetic.h"
#include "trainer/network.h"
#include "trainer/optim/optimizer.h"
#include "trainer/train.h"

namespace sweep::trainer::test {
namespace {

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

// A default (timed) run keeps its kernel choices for the next process
// (trainer/backend/tuning_cache.h): cuDNN's Find and our kernels against cuDNN's, under this GPU's
// and program's fingerprint.
TEST(CudaTrain, TimedChoicesAreKeptInTheTuningCache) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  const TrainResult r = train(synthetic_lenet(DeviceKind::cuda, 256, 64, 1, 48), quiet);
  ASSERT_EQ(r.state, RunState::completed) << r.message;
  if (tuning_cache().file().empty()) GTEST_SKIP() << "SWEEP_TUNING_CACHE is empty: no file";
  TuningCache next_process(tuning_cache().file());  // reads the file as a later process would
  const std::string& fingerprint = cuda::tuning_fingerprint(0);
  EXPECT_GE(next_process.count(fingerprint, "cudnn_conv"), 2u) << tuning_cache().file();
  EXPECT_GE(next_process.count(fingerprint, "conv_kernels"), 2u) << tuning_cache().file();
  EXPECT_EQ(next_process.count(fingerprint + " another program", "cudnn_conv"), 0u);
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
  const float factors[2] = {1.f / (255.f * 0.35f), -0.3f / 0.35f};  // mean 0.3, std 0.35
  DeviceBuffer norm(gpu, sizeof factors);
  gpu.copy_to_device(norm.as<void>(), factors, sizeof factors);

  ModelSpec model;  // lenet preset
  struct Run {
    Run(Backend& b, const ModelSpec& m)
        : net(b, m, Shape{1, 28, 28}, 10, kBatch, 11),
          x(b, kBatch * 784 * 4),
          y(b, kBatch * 4),
          dl(b, kBatch * 10 * 4),
          stats(b, 16),
          s1(b, net.param_count() * 4),
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
    d.scale = norm.f();
    d.shift = norm.f() + 1;
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
  DeviceBuffer pe = make(p), ge = make(g), m1 = DeviceBuffer(gpu, n * 4),
               v1 = DeviceBuffer(gpu, n * 4);
  DeviceBuffer pr = make(p), gr = make(g), m2 = DeviceBuffer(gpu, n * 4),
               v2 = DeviceBuffer(gpu, n * 4);
  auto opt = [](int t) {
    OptimizerStep s;
    s.kind = OptimizerKind::adam;
    s.lr = 0.01f / float(t);
    s.weight_decay = 1e-3f;
    s.t = t;
    return s;
  };
  for (int t = 1; t <= 5; ++t)
    gpu.optimizer_step(opt(t), pe.f(), ge.f(), m1.f(), v1.f(), n, nullptr);
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

// train() on CUDA records LeNet's step and replays it for every full batch: 2000 images at batch
// 64 leave a partial last batch (eager), each epoch re-uploads its order into the same buffer, and
// validation runs eagerly between replays. Accuracy must match the CPU backend's.
TEST(CudaGraphTrain, CapturedTrainingMatchesCpuAccuracy) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  TrainConfig cfg = synthetic_lenet(DeviceKind::cpu, 2000, 2000, 3, 64);
  cfg.training.log_every = 7;
  const TrainResult cpu = train(cfg, quiet);
  cfg.device.kind = DeviceKind::cuda;
  const TrainResult gpu = train(cfg, quiet);
  ASSERT_EQ(gpu.state, RunState::completed) << gpu.message;
  EXPECT_EQ(gpu.iterations, cpu.iterations);
  EXPECT_GT(cpu.final_val_accuracy, 0.3) << "the synthetic set must be learnable in 3 epochs";
  EXPECT_NEAR(gpu.final_val_accuracy, cpu.final_val_accuracy, 0.005)
      << "cpu " << cpu.final_val_accuracy << " cuda " << gpu.final_val_accuracy;
  EXPECT_NEAR(gpu.final_train_loss, cpu.final_train_loss, 0.02 + 0.02 * cpu.final_train_loss);
}

// Adam with a warm-up/cosine schedule and gradient clipping: lr and t change every replay and the
// clipping ops are part of the recorded step. Adam's normalised step magnifies cuDNN's last-bit
// differences, so the bound is looser than sgdm's.
TEST(CudaGraphTrain, CapturedAdamWithClippingAndScheduleMatchesCpu) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  TrainConfig cfg = synthetic_lenet(DeviceKind::cpu, 2000, 2000, 2, 64);
  cfg.training.optimizer = sweep::trainer::OptimizerKind::adam;
  cfg.training.learning_rate = 1e-3;
  cfg.training.gradient_clip = 1.0;
  cfg.training.schedule.type = sweep::trainer::ScheduleType::cosine;
  cfg.training.schedule.warmup_epochs = 0.5;
  const TrainResult cpu = train(cfg, quiet);
  cfg.device.kind = DeviceKind::cuda;
  const TrainResult gpu = train(cfg, quiet);
  ASSERT_EQ(gpu.state, RunState::completed) << gpu.message;
  EXPECT_GT(cpu.final_val_accuracy, 0.3);
  EXPECT_NEAR(gpu.final_val_accuracy, cpu.final_val_accuracy, 0.02)
      << "cpu " << cpu.final_val_accuracy << " cuda " << gpu.final_val_accuracy;
}

// The loop's pieces driven as train() drives them, twice on one GPU: every step eager, and the
// graph protocol (step 0 eager, step 1 recorded at batch 1 and replayed, later full batches
// replayed with offsets from batch 1, the partial last batch eager, a new epoch's order uploaded
// into the same buffer). SGD-momentum with clipping; parameters must agree closely after 2 epochs.
TEST(CudaGraphTrain, LoopStepsWithCaptureMatchEagerSteps) {
  SWEEP_SKIP_WITHOUT_CUDA();
  constexpr int kBatch = 32;
  cuda::CudaBackend gpu(0);
  SyntheticSpec spec;
  spec.train_size = 5 * kBatch + 9;  // 5 full batches and a partial one per epoch
  spec.height = spec.width = 28;
  const Dataset data = make_synthetic(spec, "train");
  const ChannelStats norm = channel_stats(data);
  TrainingSpec ts;
  ts.optimizer = sweep::trainer::OptimizerKind::sgdm;
  ts.momentum = 0.9;
  ts.weight_decay = 5e-4;
  ts.gradient_clip = 2.0;
  ModelSpec model;  // lenet
  struct Side {
    Side(Backend& b, const ModelSpec& m, const TrainingSpec& t, const Dataset& d,
         const ChannelStats& n)
        : net(b, m, Shape{1, 28, 28}, d.classes, kBatch, 5),
          opt(b, t, net.param_count()),
          src(b, d, n, kBatch, ShuffleMode::every_epoch, 9, AugmentSpec{true, 2, 0}, true),
          x(b, std::size_t(kBatch) * 784 * 4),
          y(b, kBatch * 4),
          dl(b, std::size_t(kBatch) * d.classes * 4),
          stats(b, 16) {}
    Network net;
    Optimizer opt;
    BatchSource src;
    DeviceBuffer x, y, dl, stats;
  };
  auto run_eager = [&](Side& s, std::int64_t batch, std::int64_t it, const OptimizerStep& o) {
    const int b = s.src.gather(batch, std::uint64_t(it), true, s.x.f(), s.y.as<std::int32_t>());
    const float* logits = s.net.forward(s.x.f(), b, true);
    gpu.softmax_cross_entropy(logits, s.y.as<std::int32_t>(), b, s.net.classes(), s.dl.f(),
                              s.stats.as<double>());
    s.net.backward(s.dl.f(), b);
    s.opt.launch(o, s.net.params(), s.net.grads());
  };
  auto eager = std::make_unique<Side>(gpu, model, ts, data, norm);
  auto graphed = std::make_unique<Side>(gpu, model, ts, data, norm);
  const std::int64_t ipe = eager->src.batches_per_epoch();
  ASSERT_EQ(ipe, 6);
  std::int64_t it = 0, replays = 0, captured_at = -1;
  for (int epoch = 0; epoch < 2; ++epoch) {
    eager->src.begin_epoch(epoch);
    graphed->src.begin_epoch(epoch);
    for (std::int64_t batch = 0; batch < ipe; ++batch, ++it) {
      const double lr = 0.01 * (1.0 + 0.1 * double(it % 4));
      run_eager(*eager, batch, it, eager->opt.next_step(lr));
      const OptimizerStep o = graphed->opt.next_step(lr);
      const bool full = graphed->src.batch_size_at(batch) == kBatch;
      if (!full || it == 0) {
        run_eager(*graphed, batch, it, o);
        continue;
      }
      if (captured_at < 0) {
        gpu.begin_capture();
        run_eager(*graphed, batch, it, o);
        gpu.end_capture();
        captured_at = batch;
      }
      gpu.replay(o, std::uint64_t(it), (batch - captured_at) * kBatch);
      ++replays;
    }
  }
  EXPECT_EQ(replays, 9);  // 2 epochs x 5 full batches, less the eager first
  EXPECT_EQ(eager->opt.steps_taken(), graphed->opt.steps_taken());
  const std::size_t n = eager->net.param_count();
  std::vector<float> a(n), b(n);
  gpu.copy_to_host(a.data(), eager->net.params(), n * 4);
  gpu.copy_to_host(b.data(), graphed->net.params(), n * 4);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-5f + 1e-4f * std::fabs(a[i]))) ++bad;
  EXPECT_EQ(bad, 0u) << "of " << n << " parameters differ between eager and captured loops";
  double sa[2], sb[2];
  gpu.copy_to_host(sa, eager->stats.as<void>(), 16);
  gpu.copy_to_host(sb, graphed->stats.as<void>(), 16);
  EXPECT_NEAR(sa[0], sb[0], 1e-3 * sa[0]) << "loss sums";
  EXPECT_NEAR(sa[1], sb[1], 2.0) << "correct counts";
}

// An op that throws while recording leaves the backend eager and usable: drop_graph ends the
// capture, and the same work then runs (the loop's fallback).
TEST(CudaGraphTrain, DropGraphMidCaptureReturnsToEager) {
  SWEEP_SKIP_WITHOUT_CUDA();
  cuda::CudaBackend gpu(0);
  DeviceBuffer x(gpu, 4096);
  gpu.begin_capture();
  gpu.fill(x.f(), 1024, 2.f);
  EXPECT_THROW(gpu.allocate(64), Error);
  gpu.drop_graph();
  EXPECT_FALSE(gpu.has_graph());
  gpu.fill(x.f(), 1024, 5.f);
  std::vector<float> v(1024);
  gpu.copy_to_host(v.data(), x.as<void>(), 4096);
  EXPECT_EQ(v[0], 5.f);
  EXPECT_EQ(v[1023], 5.f);
  // And a new recording works after it.
  gpu.begin_capture();
  gpu.fill(x.f(), 1024, 7.f);
  gpu.end_capture();
  gpu.replay(OptimizerStep{}, 0, 0);
  gpu.copy_to_host(v.data(), x.as<void>(), 4096);
  EXPECT_EQ(v[512], 7.f);
}

// A model with dropout trains eagerly (its masks cannot be replayed) and finishes on CUDA.
TEST(CudaGraphTrain, DropoutModelTrainsEagerly) {
  SWEEP_SKIP_WITHOUT_CUDA();
  TrainCallback quiet;
  TrainConfig cfg = synthetic_lenet(DeviceKind::cuda, 512, 256, 1, 64);
  cfg.model.preset = sweep::trainer::Preset::none;
  LayerSpec flatten, hidden, relu, drop, out;
  flatten.type = LayerKind::flatten;
  hidden.type = LayerKind::dense;
  hidden.num = {{"units", 64}};
  relu.type = LayerKind::relu;
  drop.type = LayerKind::dropout;
  drop.num = {{"rate", 0.3}};
  out.type = LayerKind::dense;
  out.num = {{"units", 10}};
  cfg.model.layers = {flatten, hidden, relu, drop, out};
  const TrainResult r = train(cfg, quiet);
  EXPECT_EQ(r.state, RunState::completed) << r.message;
  EXPECT_GT(r.final_val_accuracy, 0.0);
}

}  // namespace
}  // namespace sweep::trainer::test
