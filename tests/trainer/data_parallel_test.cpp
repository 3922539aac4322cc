/*
 * data_parallel_test.cpp — one trial over several replicas (trainer/parallel/) on CPU replicas
 * joined by the in-process communicator: the same logic the GPUs run through NCCL, testable
 * without a GPU.
 *
 * The equalities: the replicas' summed gradients are the one-device gradient of the same global
 * batch (no batch norm; relative error < 1e-6 in fp32, the difference being only the order of the
 * sums), also for uneven shares and for a replica whose share is empty; with batch norm they are
 * the documented per-replica statistics (each share normalised by its own mean and variance);
 * every replica holds the same weights after a step; a whole run on 2 replicas ends where the
 * one-device run ends; checkpoints move between replica counts.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <numeric>

#include "common/check.h"
#include "tests/trainer/small_convnet_config.h"
#include "trainer/checkpoint.h"
#include "trainer/data/load_data.h"
#include "trainer/parallel/batch_share.h"
#include "trainer/parallel/communicator.h"
#include "trainer/parallel/replica_set.h"
#include "trainer/train.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

// Conv, pooling and two dense layers, no dropout; batch norm after the convolution when asked.
TrainConfig config(bool batchnorm) {
  TrainConfig c = test::small_convnet_config(batchnorm, false, 2);
  c.data.augment.flip = true;  // augmentation draws must follow a sample into its share
  c.data.augment.translate = 2;
  return c;
}

std::vector<DeviceSpec> cpus(int n) {
  return std::vector<DeviceSpec>(std::size_t(n), {DeviceKind::cpu, 0, 1});
}

std::vector<float> grads(ReplicaSet& set, std::size_t replica = 0) {
  std::vector<float*> all;
  set.for_each([&](Replica& r) { all.push_back(r.net.grads()); });
  const float* g = all.at(replica);
  return {g, g + set.net().param_count()};
}

std::vector<float> params(Replica& r) {
  return {r.net.params(), r.net.params() + r.net.param_count()};
}

// ||a - b|| / ||b||
double relative_error(const std::vector<float>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff / norm);
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// One step of batch `batch_index` (epoch 0) on `replicas` CPU replicas; returns the set.
std::unique_ptr<ReplicaSet> one_step(const TrainConfig& c, const LoadedData& data, int replicas,
                                     std::int64_t batch_index) {
  auto set = std::make_unique<ReplicaSet>(cpus(replicas), c, data);
  set->begin_epoch(0);
  OptimizerStep opt;
  opt.lr = 0.05f;
  set->step(batch_index, 7, opt);
  return set;
}

TEST(BatchShare, SharesAreContiguousCoverTheBatchAndDifferByAtMostOne) {
  for (int batch = 1; batch <= 70; ++batch)
    for (int n = 1; n <= 9; ++n) {
      int next = 0, smallest = batch, largest = 0;
      for (int r = 0; r < n; ++r) {
        const BatchShare s = batch_share(batch, n, r);
        EXPECT_EQ(s.begin, next) << batch << " over " << n;
        next += s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
      }
      EXPECT_EQ(next, batch);
      EXPECT_LE(largest - smallest, 1);
    }
}

TEST(InProcessCommunicator, SumsAndBroadcastsOverThreeReplicas) {
  auto a = make_backend({DeviceKind::cpu, 0, 1}), b = make_backend({DeviceKind::cpu, 0, 1}),
       c = make_backend({DeviceKind::cpu, 0, 1});
  auto comm = make_communicator({a.get(), b.get(), c.get()});
  EXPECT_NE(comm->name().find("3 CPU replicas"), std::string::npos) << comm->name();
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30}, z = {100, 200, 300};
  comm->all_reduce_sum({x.data(), y.data(), z.data()}, 3);
  EXPECT_EQ(x, (std::vector<float>{111, 222, 333}));
  EXPECT_EQ(y, x);
  EXPECT_EQ(z, x);
  y = {0, 0, 0};
  x = {4, 5, 6};
  comm->broadcast({x.data(), y.data(), z.data()}, 3);
  EXPECT_EQ(y, x);
  EXPECT_EQ(z, x);
  EXPECT_THROW(comm->all_reduce_sum({x.data(), y.data()}, 3), Error);
  EXPECT_THROW(make_communicator({a.get()}), Error);
}

// The no-batch-norm equality: 2 and 3 replicas (even and uneven shares) give the one-device
// gradient of the same global batch, and every replica ends the step with the same weights.
TEST(DataParallel, ReplicasSumToTheOneDeviceGradient) {
  const TrainConfig c = config(false);
  const LoadedData data = load_data(c.data, c.training.seed);
  for (std::int64_t batch : {0, 3}) {
    auto one = one_step(c, data, 1, batch);
    const std::vector<double> reference = widen(grads(*one));
    for (int n : {2, 3}) {
      auto many = one_step(c, data, n, batch);
      EXPECT_LT(relative_error(grads(*many), reference), 1e-6) << n << " replicas";
      const std::vector<float> first = params(many->first());
      many->for_each([&](Replica& r) { EXPECT_EQ(params(r), first); });
      EXPECT_LT(relative_error(first, widen(params(one->first()))), 1e-6);
    }
  }
}

// The last batch of an epoch holds 2 images here: on 3 replicas one share is empty, and that
// replica adds zeros.
TEST(DataParallel, AnEmptyShareAddsNothing) {
  TrainConfig c = config(false);
  c.data.synthetic.train_size = 290;  // 9 * 32 + 2
  const LoadedData data = load_data(c.data, c.training.seed);
  auto one = one_step(c, data, 1, 9);
  auto three = one_step(c, data, 3, 9);
  EXPECT_EQ(three->batch_size_at(9), 2);
  EXPECT_LT(relative_error(grads(*three), widen(grads(*one))), 1e-6);
}

// Batch norm: each replica normalises its share with the share's own statistics (as Caffe and
// PyTorch's DDP do). So the 2-replica gradient is the mean of two one-device gradients, each over
// one half of the batch; and the first replica's running statistics are its half's.
TEST(DataParallel, BatchNormUsesEachReplicasOwnStatistics) {
  TrainConfig c = config(true);
  c.data.shuffle = ShuffleMode::never;  // batch 0 of 32 is batches 0 and 1 of 16
  c.data.augment = {};
  const LoadedData data = load_data(c.data, c.training.seed);
  auto two = one_step(c, data, 2, 0);
  TrainConfig half = c;
  half.training.batch_size = 16;
  auto first_half = one_step(half, data, 1, 0);
  auto second_half = one_step(half, data, 1, 1);
  const std::vector<float> a = grads(*first_half), b = grads(*second_half);
  std::vector<double> expected(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) expected[i] = (double(a[i]) + double(b[i])) / 2;
  EXPECT_LT(relative_error(grads(*two), expected), 1e-6);
  // ... and not the gradient of the whole batch normalised together.
  auto whole = one_step(c, data, 1, 0);
  EXPECT_GT(relative_error(grads(*whole), expected), 1e-4);
  const std::size_t state = two->net().state_count();
  ASSERT_GT(state, 0u);
  const float* s2 = two->net().state();
  const float* s1 = first_half->net().state();
  EXPECT_EQ(std::vector<float>(s2, s2 + state), std::vector<float>(s1, s1 + state));
}

TEST(DataParallel, ABatchSmallerThanTheReplicasIsRefused) {
  TrainConfig c = config(false);
  c.training.batch_size = 2;
  const LoadedData data = load_data(c.data, c.training.seed);
  try {
    ReplicaSet set(cpus(3), c, data);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch_size is 2, smaller than the 3 devices"),
              std::string::npos)
        << e.what();
  }
}

struct Quiet : TrainCallback {
  bool on_iteration(const IterationInfo&) override { return true; }
  bool on_validation(const ValidationInfo&) override { return true; }
};

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("sweep_dp_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// A whole run (shuffling, augmentation, validation shared out, the final evaluation) on 2
// replicas ends where the one-device run ends, up to the order of sums.
TEST(DataParallel, TwoReplicasTrainLikeOneDevice) {
  TrainConfig c = config(false);
  Quiet quiet;
  const TrainResult one = train(c, quiet);
  c.replicas = cpus(2);
  const TrainResult two = train(c, quiet);
  ASSERT_EQ(two.state, RunState::completed) << two.message;
  EXPECT_NE(two.device.find("2 replicas"), std::string::npos) << two.device;
  EXPECT_EQ(two.iterations, 20);  // 2 epochs of 9 full batches and one of 12
  EXPECT_NEAR(two.final_val_accuracy, one.final_val_accuracy, 0.011);  // one image of 100
  EXPECT_NEAR(two.final_train_loss, one.final_train_loss, 1e-4 * one.final_train_loss);
  EXPECT_NEAR(two.final_val_loss, one.final_val_loss, 1e-4 * one.final_val_loss);
  EXPECT_EQ(std::accumulate(two.confusion.begin(), two.confusion.end(), std::int64_t{0}), 100);
}

// A regression (float features, one output, mean squared error) on 2 replicas: the validation
// set's targets are shared out, and R^2 is taken over all of them.
TEST(DataParallel, TwoReplicasTrainARegressionLikeOneDevice) {
  TrainConfig c = config(false);
  c.data.task = Task::regression;
  c.model.layers.pop_back();  // the dense to 10 classes; the loop appends the one output
  c.training.learning_rate = 0.01;
  Quiet quiet;
  const TrainResult one = train(c, quiet);
  ASSERT_EQ(one.state, RunState::completed) << one.message;
  c.replicas = cpus(2);
  const TrainResult two = train(c, quiet);
  ASSERT_EQ(two.state, RunState::completed) << two.message;
  EXPECT_TRUE(two.regression);
  EXPECT_NEAR(two.final_train_loss, one.final_train_loss, 1e-4 * one.final_train_loss);
  EXPECT_NEAR(two.final_val_loss, one.final_val_loss, 1e-4 * one.final_val_loss);
  EXPECT_NEAR(two.final_val_rmse, one.final_val_rmse, 1e-4 * one.final_val_rmse);
  EXPECT_NEAR(two.final_val_mae, one.final_val_mae, 1e-4 * one.final_val_mae);
  EXPECT_NEAR(two.final_val_r2, one.final_val_r2, 1e-4);
  EXPECT_GT(one.final_val_r2, 0.0);  // it learned something
  EXPECT_TRUE(two.confusion.empty());
}

// A checkpoint does not know how many replicas wrote it: one written on 2 replicas resumes on 1,
// and the reverse, each ending where the straight run ends (up to the order of sums).
TEST(DataParallel, CheckpointsMoveBetweenReplicaCounts) {
  TrainConfig c = config(false);
  c.training.epochs = 2;
  c.training.checkpoint.every_epochs = 1;
  Quiet quiet;
  const std::string straight_path = temp_path("straight.ckpt");
  const TrainResult straight = train(c, quiet, {straight_path, false, nullptr, {}});
  const CheckpointData straight_end = read_checkpoint(straight_path);
  for (const auto& [first, then] : {std::pair{2, 1}, std::pair{1, 2}}) {
    const std::string path = temp_path(std::to_string(first) + "to" + std::to_string(then));
    TrainConfig part = c;
    part.training.epochs = 1;
    part.replicas = first > 1 ? cpus(first) : std::vector<DeviceSpec>{};
    ASSERT_EQ(train(part, quiet, {path, false, nullptr, {}}).state, RunState::completed);
    TrainConfig rest = c;
    rest.replicas = then > 1 ? cpus(then) : std::vector<DeviceSpec>{};
    const TrainResult resumed = train(rest, quiet, {path, true, nullptr, {}});
    ASSERT_EQ(resumed.state, RunState::completed) << resumed.message;
    EXPECT_EQ(resumed.epochs_completed, 2);
    EXPECT_NEAR(resumed.final_val_loss, straight.final_val_loss, 1e-4 * straight.final_val_loss);
    EXPECT_LT(relative_error(read_checkpoint(path).params, widen(straight_end.params)), 1e-5)
        << first << " then " << then;
    fs::remove(path);
  }
  fs::remove(straight_path);
}

}  // namespace
}  // namespace sweep::trainer
