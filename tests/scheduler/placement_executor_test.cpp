// Executor: trials placed on given devices (TrialSpec::placement), as a cluster host runs what
// its coordinator placed, and devices of several ranks (a multi-GPU trial never spans two).
#include <gtest/gtest.h>

#include "common/check.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

ExecutorOptions cuda_devices(std::vector<Device> devices) {
  ExecutorOptions options;
  options.devices = std::move(devices);
  return options;
}

TrialFn record_devices(std::vector<Device>& into) {
  return [&into](TrialContext& ctx) {
    into = ctx.devices();
    return TrialOutcome{};
  };
}

TEST(PlacementExecutor, APlacedTrialRunsExactlyWhereItWasPlaced) {
  Executor executor(cuda_devices({Device::cuda(0), Device::cuda(1), Device::cuda(2)}));
  std::vector<Device> one, two;
  TrialSpec on_two = spec_with_id(1);
  on_two.placement = {Device::cuda(2)};  // cuda:0 and cuda:1 are free too
  executor.submit(on_two, record_devices(one)).wait();
  EXPECT_EQ(one, (std::vector<Device>{Device::cuda(2)}));
  TrialSpec pair = spec_with_id(2);
  pair.gpus = 2;
  pair.placement = {Device::cuda(2), Device::cuda(0)};
  executor.submit(pair, record_devices(two)).wait();
  EXPECT_EQ(two, (std::vector<Device>{Device::cuda(2), Device::cuda(0)}));
}

TEST(PlacementExecutor, APlacedTrialWaitsForItsOwnDevice) {
  Executor executor(cuda_devices({Device::cuda(0), Device::cuda(1)}));
  testing::Gate release, busy;
  TrialSpec first = spec_with_id(1);
  first.placement = {Device::cuda(1)};
  auto blocker = executor.submit(first, [&](TrialContext&) {
    busy.open();
    release.wait();
    return TrialOutcome{};
  });
  ASSERT_TRUE(busy.wait());
  std::vector<Device> seen;
  TrialSpec second = spec_with_id(2);
  second.placement = {Device::cuda(1)};
  auto waiting = executor.submit(second, record_devices(seen));
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(100)), false);  // cuda:0 is free: not used
  release.open();
  waiting.wait();
  EXPECT_EQ(seen, (std::vector<Device>{Device::cuda(1)}));
}

TEST(PlacementExecutor, APlacementOnADeviceTheExecutorLacksIsRefused) {
  Executor executor(cuda_devices({Device::cuda(0)}));
  TrialSpec spec = spec_with_id(1);
  spec.placement = {Device::cuda(3)};
  EXPECT_THROW(executor.submit(spec, [](TrialContext&) { return TrialOutcome{}; }), Error);
}

TEST(PlacementExecutor, AMultiGpuTrialNeverSpansRanks) {
  // Two ranks with one GPU each: two GPUs in all, but no rank has two.
  Executor executor(cuda_devices({Device::cuda(0), Device::cuda(0).on_rank(1)}));
  TrialSpec spec = spec_with_id(1);
  spec.gpus = 2;
  try {
    executor.submit(spec, [](TrialContext&) { return TrialOutcome{}; });
    FAIL() << "a 2-GPU trial was accepted over two ranks of one GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 1 on any one rank"), std::string::npos) << e.what();
  }
  // With two GPUs on rank 1, the trial gets both of them, never one of rank 0's.
  Executor two(
      cuda_devices({Device::cuda(0), Device::cuda(0).on_rank(1), Device::cuda(1).on_rank(1)}));
  std::vector<Device> seen;
  two.submit(spec, record_devices(seen)).wait();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].rank, 1);
  EXPECT_EQ(seen[1].rank, 1);
  EXPECT_NE(seen[0].index, seen[1].index);
  EXPECT_EQ(devices_label(seen).substr(0, 11), "rank1:cuda:");  // "rank1:cuda:0+1" or ":1+0"
}

}  // namespace
}  // namespace sweep::scheduler
