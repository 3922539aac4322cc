/*
 * cuda_array_test.cpp — fused arrays on the GPU: every member's logged losses, validations and
 * final results equal its lone run's (the members run the very kernels of their lone runs, each on
 * its own stream and graph), for LeNet and a batch-norm net, 4 and 16 members, a diverging member
 * among them, and an array larger than the free memory (trained in waves).
 *
 * The members train with training.deterministic, so that "equal" means bit for bit: with the
 * default (fastest) algorithms cuDNN's weight gradients add with atomics, and two lone runs of one
 * trial can differ in their last bits (up to 1e-4 relative after 50 steps with 16 members at
 * once), which would hide what fusion itself does. Deterministic mode runs LeNet's
 * convolutions on our kernels in the order of their plans for a quarter of the device whatever the
 * share (a plan for the member's share, order and all, would sum otherwise: five of these tests and
 * the op test fail then).
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "tests/trainer/layer_spec_util.h"
#include "trainer/array/train_array.h"

namespace sweep::trainer {
namespace {

using test::layer;

struct Recorder : TrainCallback {
  std::vector<double> losses, val_losses;
  bool on_iteration(const IterationInfo& i) override {
    if (i.has_loss) losses.push_back(i.train_loss);
    return true;
  }
  bool on_validation(const ValidationInfo& v) override {
    val_losses.push_back(v.val_loss);
    return true;
  }
};

// 1,600 images at batch 64: 25 steps per epoch, 50 over two epochs; a loss logged every 5.
std::vector<TrainConfig> members(bool batch_norm, int k) {
  TrainConfig base = test::synthetic_lenet(DeviceKind::cuda, 1600, 256, 2, 64);
  base.training.log_every = 5;
  if (batch_norm) {
    base.model.preset = Preset::none;
    base.model.layers = {layer("conv", {{"filters", 8}, {"kernel", 3}, {"bias", 0}}),
                         layer("batchnorm"),
                         layer("relu"),
                         layer("maxpool", {{"size", 2}, {"stride", 2}}),
                         layer("flatten"),
                         layer("dense", {{"units", 10}})};
  }
  base.training.deterministic = true;
  std::vector<TrainConfig> out(k, base);
  for (int i = 0; i < k; ++i) {
    out[i].training.learning_rate = 0.002 * (1 + i);
    out[i].training.momentum = i % 2 ? 0.9 : 0.5;
    out[i].training.seed = 40 + i;
  }
  return out;
}

void expect_equal(const std::vector<double>& got, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << what << " #" << i;
}

void expect_members_as_alone(const std::vector<TrainConfig>& configs,
                             const std::vector<std::size_t>& compared) {
  std::vector<Recorder> recs(configs.size());
  std::vector<ArrayMember> array(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    array[i].config = configs[i];
    array[i].callback = &recs[i];
  }
  std::vector<TrainResult> results(configs.size());
  train_array(array, [&](std::size_t i, MemberEnd end) {
    ASSERT_FALSE(end.error) << "member " << i;
    results[i] = end.result;
  });
  for (std::size_t i : compared) {
    Recorder lone, again;
    const TrainResult alone = train(configs[i], lone);
    train(configs[i], again);
    ASSERT_EQ(lone.losses.size(), 10u);
    expect_equal(again.losses, lone.losses, "two lone runs of member " + std::to_string(i));
    const std::string who = "member " + std::to_string(i);
    expect_equal(recs[i].losses, lone.losses, who + " loss");
    expect_equal(recs[i].val_losses, lone.val_losses, who + " val_loss");
    EXPECT_EQ(results[i].state, alone.state) << who;
    expect_equal({results[i].final_val_loss}, {alone.final_val_loss}, who + " final val_loss");
  }
}

TEST(CudaArray, LeNetMembersTrainAsTheirLoneRuns) {
  SWEEP_SKIP_WITHOUT_CUDA();
  expect_members_as_alone(members(false, 4), {0, 1, 2, 3});
}

TEST(CudaArray, BatchNormMembersTrainAsTheirLoneRuns) {
  SWEEP_SKIP_WITHOUT_CUDA();
  expect_members_as_alone(members(true, 4), {0, 1, 2, 3});
}

// Members keeping bf16 activations (a net of 8-filter convolutions in bf16: every activation from
// the first convolution to the global average pool bf16 NHWC). Not deterministic (that mode keeps
// fp32 activations), so a member is held to its lone run within a bound: the bf16 engines and
// a shared GPU's kernel choices may add in another order; the bound is above the spread they give.
TEST(CudaArray, Bf16ActivationMembersTrackTheirLoneRuns) {
  SWEEP_SKIP_WITHOUT_CUDA();
  std::vector<TrainConfig> configs = members(true, 4);
  for (TrainConfig& c : configs) {
    c.data.synthetic.channels = 3;
    c.data.synthetic.height = c.data.synthetic.width = 16;
    c.model.layers = {layer("conv", {{"filters", 8}, {"kernel", 3}, {"bias", 0}}),
                      layer("batchnorm"),
                      layer("relu"),
                      layer("conv", {{"filters", 16}, {"kernel", 3}, {"bias", 0}}),
                      layer("batchnorm"),
                      layer("relu"),
                      layer("gap"),
                      layer("dense", {{"units", 10}})};
    c.training.precision = Precision::bf16;
    c.training.deterministic = false;
  }
  std::vector<Recorder> recs(configs.size());
  std::vector<ArrayMember> array(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    array[i].config = configs[i];
    array[i].callback = &recs[i];
  }
  train_array(array, [&](std::size_t i, MemberEnd end) { ASSERT_FALSE(end.error) << i; });
  double worst = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    Recorder lone;
    const TrainResult alone = train(configs[i], lone);
    ASSERT_EQ(alone.state, RunState::completed) << alone.message;
    ASSERT_EQ(recs[i].losses.size(), lone.losses.size()) << "member " << i;
    for (std::size_t j = 0; j < lone.losses.size(); ++j)
      worst = std::max(worst, std::fabs(recs[i].losses[j] - lone.losses[j]) / lone.losses[j]);
  }
  std::printf("bf16 activations: largest relative gap of a member's loss to its lone run: %.3g\n",
              worst);
  EXPECT_LT(worst, 1e-2);
}

TEST(CudaArray, SixteenMembersOnSixteenStreamsStayApart) {
  SWEEP_SKIP_WITHOUT_CUDA();
  expect_members_as_alone(members(false, 16), {0, 7, 15});
}

TEST(CudaArray, ADivergingMemberLeavesTheOthersAsTheyWereAlone) {
  SWEEP_SKIP_WITHOUT_CUDA();
  std::vector<TrainConfig> configs = members(false, 4);
  configs[2].training.learning_rate = 1e12;
  std::vector<Recorder> recs(4);
  std::vector<ArrayMember> array(4);
  for (int i = 0; i < 4; ++i) {
    array[i].config = configs[i];
    array[i].callback = &recs[i];
  }
  std::vector<TrainResult> results(4);
  train_array(array, [&](std::size_t i, MemberEnd end) {
    ASSERT_FALSE(end.error);
    results[i] = end.result;
  });
  EXPECT_EQ(results[2].state, RunState::diverged);
  for (int i : {0, 1, 3}) {
    Recorder lone;
    train(configs[i], lone);
    expect_equal(recs[i].losses, lone.losses, "member " + std::to_string(i));
  }
}

// The GPU made small by holding all but a few members' worth of its free memory: the array trains
// in waves (members that do not fit wait for others to end) and every member still ends with its
// lone run's numbers.
TEST(CudaArray, AnArrayLargerThanTheFreeMemoryTrainsInWaves) {
  SWEEP_SKIP_WITHOUT_CUDA();
  const std::vector<TrainConfig> configs = members(false, 12);
  // One member's footprint: the device's free memory during a two-member array, halved.
  std::size_t free_before = 0, free_during = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  {
    struct Probe : Recorder {
      std::size_t* during = nullptr;
      bool on_iteration(const IterationInfo& i) override {
        std::size_t device_total = 0;
        if (i.iteration == 5 && cudaMemGetInfo(during, &device_total) != cudaSuccess) *during = 0;
        return Recorder::on_iteration(i);
      }
    };
    std::vector<Probe> probes(2);
    std::vector<ArrayMember> two(2);
    for (int i = 0; i < 2; ++i) {
      probes[i].during = &free_during;
      two[i].config = configs[i];
      two[i].callback = &probes[i];
    }
    train_array(two, [](std::size_t, MemberEnd end) { ASSERT_FALSE(end.error); });
  }
  ASSERT_GT(free_during, 0u);
  ASSERT_LT(free_during, free_before);
  const std::size_t footprint = (free_before - free_during) / 2;
  // Hold all but 3.5 members' worth, then all but 1.5: members are built side by side, and those
  // that ran out of memory so are retried one at a time (with room for one and a half, building
  // twelve at once once left every member out of memory).
  for (const std::size_t halves : {7u, 3u}) {
    SCOPED_TRACE("room for " + std::to_string(halves) + " half members");
    std::size_t free_now = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_now, &total), cudaSuccess);
    const std::size_t keep = footprint * halves / 2;
    ASSERT_GT(free_now, keep);
    void* hog = nullptr;
    ASSERT_EQ(cudaMalloc(&hog, free_now - keep), cudaSuccess);
    std::vector<Recorder> recs(configs.size());
    std::vector<ArrayMember> array(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) {
      array[i].config = configs[i];
      array[i].callback = &recs[i];
    }
    std::vector<std::string> errors(configs.size());
    const ArrayReport report = train_array(array, [&](std::size_t i, MemberEnd end) {
      if (!end.error) return;
      try {
        std::rethrow_exception(end.error);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
    cudaFree(hog);
    for (std::size_t i = 0; i < configs.size(); ++i) EXPECT_EQ(errors[i], "") << "member " << i;
    EXPECT_GE(report.most_active, 1u);
    EXPECT_LT(report.most_active, configs.size()) << "footprint " << footprint;
    for (std::size_t i : {0u, 6u, 11u}) {
      Recorder lone;
      train(configs[i], lone);
      expect_equal(recs[i].losses, lone.losses, "member " + std::to_string(i));
    }
  }
}

}  // namespace
}  // namespace sweep::trainer
