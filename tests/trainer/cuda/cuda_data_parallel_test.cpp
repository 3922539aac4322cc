/*
 * cuda_data_parallel_test.cpp — one trial over two GPUs through NCCL: the equalities the CPU
 * replicas show in tests/trainer/data_parallel_test.cpp, on the real thing. Skips, saying so, on a
 * machine with fewer than two GPUs.
 *
 * Tolerances are looser than the CPU's 1e-6: cuDNN may pick a different algorithm for a batch of
 * 32 than for a share of 16, which changes the order of the sums inside a convolution.
 */
#include <cmath>
#include <filesystem>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/checkpoint.h"
#include "trainer/data/load_data.h"
#include "trainer/parallel/replica_set.h"
#include "trainer/train.h"

namespace sweep::trainer::test {
namespace {

namespace fs = std::filesystem;

#define SWEEP_SKIP_WITHOUT_TWO_GPUS()                                          \
  do {                                                                         \
    if (cuda_device_count_impl() < 2)                                          \
      GTEST_SKIP() << "data-parallel GPU tests need 2 GPUs; this machine has " \
                   << cuda_device_count_impl();                                \
  } while (0)

std::vector<DeviceSpec> gpus(int n) {
  std::vector<DeviceSpec> v;
  for (int i = 0; i < n; ++i) v.push_back({DeviceKind::cuda, i, 0});
  return v;
}

std::vector<float> read(Backend& b, const float* p, std::size_t n) {
  std::vector<float> v(n);
  b.copy_to_host(v.data(), p, n * sizeof(float));
  return v;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

TEST(CudaDataParallel, TwoGpusSumToTheOneGpuGradientAndKeepEqualWeights) {
  SWEEP_SKIP_WITHOUT_TWO_GPUS();
  const TrainConfig c = synthetic_lenet(DeviceKind::cuda, 512, 128, 1, 64);
  const LoadedData data = load_data(c.data, c.training.seed);
  OptimizerStep opt;
  opt.lr = 0.01f;
  ReplicaSet one(gpus(1), c, data), two(gpus(2), c, data);
  EXPECT_NE(two.device_name().find("NCCL"), std::string::npos) << two.device_name();
  for (ReplicaSet* s : {&one, &two}) {
    s->begin_epoch(0);
    for (int step = 0; step < 3; ++step) s->step(step, std::uint64_t(step), opt);
  }
  const std::size_t n = one.net().param_count();
  const auto g1 = read(one.backend(), one.net().grads(), n);
  const auto g2 = read(two.backend(), two.net().grads(), n);
  EXPECT_LT(relative_error(g2, g1), 1e-5);
  std::vector<std::vector<float>> weights;
  two.for_each([&](Replica& r) { weights.push_back(read(*r.backend, r.net.params(), n)); });
  EXPECT_EQ(weights[0], weights[1]) << "the replicas' weights must stay identical, bit for bit";
  EXPECT_LT(relative_error(weights[0], read(one.backend(), one.net().params(), n)), 1e-5);
}

// The whole loop on two GPUs, with its CUDA graph (the all-reduce recorded in each GPU's graph):
// it ends where the one-GPU run ends.
TEST(CudaDataParallel, TrainingOnTwoGpusMatchesOneGpu) {
  SWEEP_SKIP_WITHOUT_TWO_GPUS();
  TrainConfig c = synthetic_lenet(DeviceKind::cuda, 2048, 512, 2, 64);
  TrainCallback quiet;
  const TrainResult one = train(c, quiet);
  c.replicas = gpus(2);
  const TrainResult two = train(c, quiet);
  ASSERT_EQ(two.state, RunState::completed) << two.message;
  EXPECT_NE(two.device.find("2 replicas"), std::string::npos) << two.device;
  EXPECT_NEAR(two.final_val_accuracy, one.final_val_accuracy, 0.01);
  EXPECT_NEAR(two.final_train_loss, one.final_train_loss, 0.01 + 0.01 * one.final_train_loss);
}

// The same with bf16 activations kept between layers (8- and 16-filter convolutions in bf16): each
// replica's network plans its storage as one GPU's does.
TEST(CudaDataParallel, Bf16ActivationsOnTwoGpusMatchOneGpu) {
  SWEEP_SKIP_WITHOUT_TWO_GPUS();
  TrainConfig c = synthetic_lenet(DeviceKind::cuda, 2048, 512, 2, 64);
  c.data.synthetic.channels = 3;
  c.data.synthetic.height = c.data.synthetic.width = 16;
  c.model.preset = Preset::convnet;
  c.model.net_width = 8;
  c.model.block_depth = 1;
  c.training.precision = Precision::bf16;
  TrainCallback quiet;
  const TrainResult one = train(c, quiet);
  c.replicas = gpus(2);
  const TrainResult two = train(c, quiet);
  ASSERT_EQ(two.state, RunState::completed) << two.message;
  EXPECT_GT(one.final_val_accuracy, 0.2) << "the net must learn";
  EXPECT_NEAR(two.final_val_accuracy, one.final_val_accuracy, 0.03);
  EXPECT_NEAR(two.final_train_loss, one.final_train_loss, 0.02 + 0.02 * one.final_train_loss);
}

TEST(CudaDataParallel, ACheckpointFromTwoGpusResumesOnOne) {
  SWEEP_SKIP_WITHOUT_TWO_GPUS();
  TrainConfig c = synthetic_lenet(DeviceKind::cuda, 2048, 512, 2, 64);
  c.training.checkpoint.every_epochs = 1;
  const std::string path =
      (fs::temp_directory_path() / ("sweep_cdp_" + std::to_string(::getpid()))).string();
  TrainCallback quiet;
  TrainConfig first = c;
  first.training.epochs = 1;
  first.replicas = gpus(2);
  ASSERT_EQ(train(first, quiet, {path, false, nullptr, {}}).state, RunState::completed);
  const TrainResult rest = train(c, quiet, {path, true, nullptr, {}});
  EXPECT_EQ(rest.state, RunState::completed) << rest.message;
  EXPECT_EQ(rest.epochs_completed, 2);
  EXPECT_GT(rest.final_val_accuracy, 0.3);
  fs::remove(path);
}

}  // namespace
}  // namespace sweep::trainer::test
