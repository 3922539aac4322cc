// Executor: trials that take several GPUs at once (data parallel). Fake CUDA devices: the
// executor never touches CUDA, so these run anywhere, and under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "common/check.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

ExecutorOptions gpus(int n, int per_gpu = 1) {
  ExecutorOptions options;
  options.devices.clear();
  for (int i = 0; i < n; ++i) options.devices.push_back(Device::cuda(i));
  options.trials_per_gpu = per_gpu;
  return options;
}

TrialSpec needing(std::int64_t id, int n) {
  TrialSpec spec = spec_with_id(id);
  spec.gpus = n;
  return spec;
}

// Counts trials on each fake GPU; fails if one GPU ever holds more than `limit` at once.
struct Occupancy {
  explicit Occupancy(int most) : limit(most) {}
  void enter(const std::vector<Device>& devices) {
    std::lock_guard lock(mutex);
    for (const Device& d : devices)
      if (++on[d.index] > limit) over = true;
  }
  void leave(const std::vector<Device>& devices) {
    std::lock_guard lock(mutex);
    for (const Device& d : devices) --on[d.index];
  }
  int limit;
  std::mutex mutex;
  std::map<int, int> on;
  bool over = false;
};

TEST(MultiGpuExecutor, ATwoGpuTrialTakesTwoDistinctGpusAndOneGpuTrialsWait) {
  auto sink = std::make_shared<testing::RecordingSink>();
  Executor executor(gpus(2), {sink});
  Gate release, started;
  std::vector<Device> seen;
  auto big = executor.submit(needing(1, 2), [&](TrialContext& ctx) {
    seen = ctx.devices();
    EXPECT_EQ(ctx.device(), ctx.devices().front());
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].index, seen[1].index);
  EXPECT_EQ(sink->events(1).at(1), "started:" + devices_label(seen));  // "cuda:0+1"
  EXPECT_EQ(devices_label({Device::cuda(1), Device::cuda(3)}), "cuda:1+3");
  auto small = executor.submit(spec_with_id(2), [](TrialContext&) { return completed(); });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(small.state(), TrialState::queued) << "both GPUs are the big trial's";
  EXPECT_EQ(small.wait_reason(), "no free device: 2 of 2 cuda slots busy");
  release.open();
  EXPECT_EQ(big.outcome().state, TrialState::completed);
  EXPECT_EQ(small.outcome().state, TrialState::completed);
}

// trials_per_gpu 2 on 2 GPUs: two 2-GPU trials run at once (one slot of each GPU each), a third
// waits saying why, and no GPU ever hosts more than 2 trials.
TEST(MultiGpuExecutor, SharedGpusAreNeverOverCommitted) {
  Executor executor(gpus(2, 2));
  Occupancy occupancy(2);
  Gate release;
  std::atomic<int> running{0};
  Gate two_running;
  auto fn = [&](TrialContext& ctx) {
    occupancy.enter(ctx.devices());
    if (++running == 2) two_running.open();
    release.wait();
    occupancy.leave(ctx.devices());
    return completed();
  };
  auto a = executor.submit(needing(1, 2), fn);
  auto b = executor.submit(needing(2, 2), fn);
  ASSERT_TRUE(two_running.wait());
  auto c = executor.submit(needing(3, 2), fn);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(c.state(), TrialState::queued);
  EXPECT_EQ(c.wait_reason(), "needs 2 GPUs, 0 free");
  release.open();
  for (auto* f : {&a, &b, &c}) EXPECT_EQ(f->outcome().state, TrialState::completed);
  EXPECT_FALSE(occupancy.over);
}

// A mixed stream: 2-GPU and 1-GPU trials on 3 GPUs; every trial runs once, no GPU is shared, and
// a 2-GPU trial is never passed by later trials (strict FIFO: it starts before any later one).
TEST(MultiGpuExecutor, MixedTrialsAllRunFifoWithoutSharingAGpu) {
  Executor executor(gpus(3));
  Occupancy occupancy(1);
  std::mutex order_mutex;
  std::vector<std::int64_t> start_order;
  std::vector<TrialFuture> futures;
  for (int i = 1; i <= 24; ++i)
    futures.push_back(executor.submit(needing(i, i % 3 == 0 ? 2 : 1), [&, i](TrialContext& ctx) {
      {
        std::lock_guard lock(order_mutex);
        start_order.push_back(i);
      }
      occupancy.enter(ctx.devices());
      EXPECT_EQ(ctx.devices().size(), std::size_t(i % 3 == 0 ? 2 : 1));
      std::this_thread::sleep_for(2ms);
      occupancy.leave(ctx.devices());
      return completed();
    }));
  for (auto& f : futures) EXPECT_EQ(f.outcome().state, TrialState::completed);
  EXPECT_FALSE(occupancy.over);
  ASSERT_EQ(start_order.size(), 24u);
  for (std::size_t k = 0; k < start_order.size(); ++k) {
    if (start_order[k] % 3 != 0) continue;
    for (std::size_t earlier = 0; earlier < k; ++earlier)
      EXPECT_LT(start_order[earlier], start_order[k] + 3)
          << "trial " << start_order[earlier] << " started before 2-GPU trial " << start_order[k];
  }
}

TEST(MultiGpuExecutor, MoreGpusThanTheExecutorHasIsRefusedAtSubmit) {
  Executor executor(gpus(2));
  try {
    executor.submit(needing(1, 3), [](TrialContext&) { return completed(); });
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 3 GPUs, but the executor has 2"), std::string::npos)
        << e.what();
  }
  Executor cpu_only;  // a CPU executor has no GPU to give
  EXPECT_THROW(cpu_only.submit(needing(2, 2), [](TrialContext&) { return completed(); }), Error);
}

TEST(MultiGpuExecutor, InterruptWithAMultiGpuTrialQueuedEndsItWithoutAHang) {
  Executor executor(gpus(2));
  Gate release, started;
  auto one = executor.submit(spec_with_id(1), [&](TrialContext& ctx) {
    started.open();
    while (!ctx.should_stop()) std::this_thread::sleep_for(1ms);
    return completed();
  });
  ASSERT_TRUE(started.wait());
  auto big = executor.submit(needing(2, 2), [](TrialContext&) { return completed(); });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(big.wait_reason(), "needs 2 GPUs, 1 free");
  executor.interrupt("test");
  EXPECT_EQ(big.outcome().state, TrialState::interrupted);
  EXPECT_EQ(one.outcome().state, TrialState::interrupted);
  executor.shutdown();
}

TEST(MultiGpuExecutor, CancellingARunningMultiGpuTrialFreesAllItsGpus) {
  Executor executor(gpus(2));
  Gate started;
  auto big = executor.submit(needing(1, 2), [&](TrialContext& ctx) {
    started.open();
    while (!ctx.should_stop()) std::this_thread::sleep_for(1ms);
    return completed();
  });
  ASSERT_TRUE(started.wait());
  big.cancel();
  EXPECT_EQ(big.outcome().state, TrialState::cancelled);
  std::atomic<int> ran{0};
  Gate both;
  std::vector<TrialFuture> after;
  for (int i = 2; i <= 3; ++i)
    after.push_back(executor.submit(spec_with_id(i), [&](TrialContext&) {
      if (++ran == 2) both.open();
      EXPECT_TRUE(both.wait());  // both GPUs at once: the cancelled trial held neither
      return completed();
    }));
  for (auto& f : after) EXPECT_EQ(f.outcome().state, TrialState::completed);
}

}  // namespace
}  // namespace sweep::scheduler
