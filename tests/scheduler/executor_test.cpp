// Executor: futures, slots, wait reasons, failures, sinks, ids, devices, shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/check.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

TEST(Executor, FutureReportsOutcomeAndSummary) {
  Executor executor(cpu_options(1));
  auto future = executor.submit(spec_with_id(7), [](TrialContext& ctx) {
    EXPECT_EQ(ctx.device(), Device::cpu(0));
    EXPECT_EQ(ctx.spec().id, 7);
    return completed({{"answer", 42}});
  });
  future.wait();
  EXPECT_TRUE(future.ready());
  EXPECT_EQ(future.id(), 7);
  EXPECT_EQ(future.state(), TrialState::completed);
  EXPECT_EQ(future.get().summary.at("answer"), 42);
  EXPECT_EQ(future.device(), Device::cpu(0));
  TrialFuture copy = future;  // copies share the state
  EXPECT_EQ(copy.outcome().state, TrialState::completed);
}

TEST(Executor, WaitForTimesOutWhileRunningThenSucceeds) {
  Executor executor(cpu_options(1));
  Gate release;
  auto future = executor.submit(spec_with_id(1), [&](TrialContext&) {
    release.wait();
    return completed();
  });
  EXPECT_FALSE(future.wait_for(20ms));
  EXPECT_FALSE(future.ready());
  release.open();
  EXPECT_TRUE(future.wait_for(20s));
}

TEST(Executor, GetRethrowsTheTrialFnsExceptionAndOutcomeDoesNot) {
  Executor executor(cpu_options(2));
  auto throwing = executor.submit(spec_with_id(1), [](TrialContext&) -> TrialOutcome {
    throw std::runtime_error("boom in trial");
  });
  auto oom = executor.submit(spec_with_id(2),
                             [](TrialContext&) -> TrialOutcome { throw std::bad_alloc(); });
  EXPECT_THROW(
      {
        try {
          throwing.get();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "boom in trial");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_THROW(throwing.get(), std::runtime_error);  // again: get() may be called many times
  EXPECT_EQ(throwing.outcome().state, TrialState::failed);
  EXPECT_EQ(throwing.outcome().message, "boom in trial");
  EXPECT_THROW(oom.get(), std::bad_alloc);
  EXPECT_EQ(oom.outcome().message, "out of memory");
}

TEST(Executor, OneFailingTrialDoesNotStopTheOthers) {
  Executor executor(cpu_options(2));
  std::vector<TrialSpec> specs;
  for (int i = 0; i < 8; ++i) specs.push_back(spec_with_id(i + 1, {{"i", i}}));
  auto outcomes = parfor(executor, specs, [](TrialContext& ctx) {
    if (ctx.spec().params.at("i") == 3) throw Error("trial 3 breaks");
    return completed({{"i", ctx.spec().params.at("i")}});
  });
  ASSERT_EQ(outcomes.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    if (i == 3) {
      EXPECT_EQ(outcomes[i].state, TrialState::failed);
      EXPECT_EQ(outcomes[i].message, "trial 3 breaks");
    } else {
      EXPECT_EQ(outcomes[i].state, TrialState::completed);
      EXPECT_EQ(outcomes[i].summary.at("i"), i);  // parfor keeps spec order
    }
  }
}

TEST(Executor, NeverRunsMoreTrialsThanSlots) {
  constexpr int kSlots = 3;
  Executor executor(cpu_options(kSlots));
  std::atomic<int> running{0}, most{0};
  // First prove all three slots really run at once: each of the first three waits for the others.
  std::atomic<int> arrived{0};
  Gate all_arrived;
  std::vector<TrialFuture> futures;
  for (int i = 0; i < 30; ++i)
    futures.push_back(executor.submit(spec_with_id(i + 1), [&, i](TrialContext&) {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      if (i < kSlots) {
        if (++arrived == kSlots) all_arrived.open();
        EXPECT_TRUE(all_arrived.wait());
      } else {
        std::this_thread::sleep_for(1ms);
      }
      --running;
      return completed();
    }));
  for (auto& f : futures) EXPECT_EQ(f.outcome().state, TrialState::completed);
  EXPECT_EQ(most.load(), kSlots);
  EXPECT_EQ(executor.stats().finished, 30u);
}

TEST(Executor, MaxConcurrentCapsRunningTrials) {
  Executor executor(cpu_options(4, /*max_concurrent=*/2));
  std::atomic<int> running{0}, most{0};
  std::vector<TrialSpec> specs;
  for (int i = 0; i < 20; ++i) specs.push_back(spec_with_id(i + 1));
  parfor(executor, specs, [&](TrialContext&) {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(1ms);
    --running;
    return completed();
  });
  EXPECT_LE(most.load(), 2);
  EXPECT_GE(most.load(), 1);
}

TEST(Executor, QueuedTrialsSayWhyTheyWait) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(2), {sink});
  Gate release;
  std::atomic<int> started{0};
  Gate both_started;
  auto blocker = [&](TrialContext&) {
    if (++started == 2) both_started.open();
    release.wait();
    return completed();
  };
  auto a = executor.submit(spec_with_id(1), blocker);
  auto b = executor.submit(spec_with_id(2), blocker);
  ASSERT_TRUE(both_started.wait());
  auto c = executor.submit(spec_with_id(3), [](TrialContext&) { return completed(); });
  EXPECT_EQ(c.state(), TrialState::queued);
  EXPECT_EQ(c.wait_reason(), "no free device: 2 of 2 cpu slots busy");
  EXPECT_EQ(sink->events(3).front(), "queued:no free device: 2 of 2 cpu slots busy");
  EXPECT_EQ(executor.stats().queued, 1u);
  EXPECT_EQ(executor.stats().running, 2u);
  release.open();
  EXPECT_EQ(c.outcome().state, TrialState::completed);
  EXPECT_EQ(c.wait_reason(), "");
  EXPECT_EQ(sink->events(1).front(), "queued:");  // a free slot: no reason to wait
}

TEST(Executor, ConcurrencyLimitIsTheWaitReasonWhenItBinds) {
  Executor executor(cpu_options(2, /*max_concurrent=*/1));
  Gate release, started;
  auto a = executor.submit(spec_with_id(1), [&](TrialContext&) {
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());
  auto b = executor.submit(spec_with_id(2), [](TrialContext&) { return completed(); });
  EXPECT_EQ(b.wait_reason(), "concurrency limit 1 reached");
  release.open();
  EXPECT_EQ(b.outcome().state, TrialState::completed);
}

TEST(Executor, WaitReasonChangeReachesQueuedTrialsSinks) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(1), {sink});
  Gate release, started;
  auto a = executor.submit(spec_with_id(1), [&](TrialContext& ctx) {
    started.open();
    return run_until_stopped(ctx);
  });
  ASSERT_TRUE(started.wait());
  auto b = executor.submit(spec_with_id(2), [](TrialContext&) { return completed(); });
  EXPECT_EQ(b.wait_reason(), "no free device: 1 of 1 cpu slots busy");
  executor.interrupt("test interrupt");
  EXPECT_EQ(b.outcome().state, TrialState::interrupted);
  EXPECT_EQ(a.outcome().state, TrialState::interrupted);
  auto c = executor.submit(spec_with_id(3), [](TrialContext&) { return completed(); });
  EXPECT_EQ(c.outcome().state, TrialState::interrupted);
  EXPECT_EQ(sink->events(3).front(), "queued:executor interrupted");
  EXPECT_EQ(sink->count(3, "started"), 0u);
}

TEST(Executor, SinksSeeEachTrialsEventsInOrderAndCallbacksToo) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(2), {sink});
  std::vector<TrialFuture> futures;
  std::atomic<int> callback_metrics{0}, callback_finished{0};
  for (int i = 1; i <= 6; ++i) {
    TrialCallbacks callbacks;
    callbacks.on_metric = [&](const MetricPoint&) { ++callback_metrics; };
    callbacks.on_finished = [&](const TrialOutcome&) { ++callback_finished; };
    futures.push_back(executor.submit(
        spec_with_id(i),
        [](TrialContext& ctx) {
          ctx.log("hello");
          for (int e = 1; e <= 3; ++e) {
            ctx.report("loss", 1.0 / e, e, e);
            ctx.set_progress(e / 3.0, "epoch " + std::to_string(e));
          }
          return completed();
        },
        callbacks));
  }
  for (auto& f : futures) f.wait();
  for (int i = 1; i <= 6; ++i) {
    const auto events = sink->events(i);
    ASSERT_EQ(events.size(), 10u) << i;
    EXPECT_EQ(events[0].rfind("queued:", 0), 0u);
    EXPECT_TRUE(events[1] == "started:cpu:0" || events[1] == "started:cpu:1") << events[1];
    EXPECT_EQ(events[2], "log:hello");
    EXPECT_EQ(events[3], "metric:loss");
    EXPECT_EQ(events[4], "progress:epoch 1");
    EXPECT_EQ(events.back(), "finished:completed");
    const auto metrics = sink->metrics(i);
    ASSERT_EQ(metrics.size(), 3u);
    EXPECT_GT(metrics[0].wall_time, 1.6e9);  // filled in: seconds since 1970, UTC
    EXPECT_EQ(metrics[2].epoch, 3);
  }
  EXPECT_EQ(callback_metrics.load(), 18);
  EXPECT_EQ(callback_finished.load(), 6);
  EXPECT_EQ(futures[0].progress().text, "epoch 3");
  EXPECT_DOUBLE_EQ(futures[0].progress().fraction, 1.0);
}

TEST(Executor, SinkFailureInOnMetricFailsThatTrialOnly) {
  class FullDisk : public EventSink {
    void on_metric(const TrialSpec& spec, const MetricPoint&) override {
      if (spec.id == 2) throw Error("database or disk is full");
    }
  };
  Executor executor(cpu_options(2), {std::make_shared<FullDisk>()});
  auto fn = [](TrialContext& ctx) {
    ctx.report("loss", 1, 1, 1);
    return completed();
  };
  auto ok = executor.submit(spec_with_id(1), fn);
  auto broken = executor.submit(spec_with_id(2), fn);
  EXPECT_EQ(ok.outcome().state, TrialState::completed);
  EXPECT_EQ(broken.outcome().state, TrialState::failed);
  EXPECT_EQ(broken.outcome().message, "database or disk is full");
}

TEST(Executor, AssignsIdsAndRejectsLiveDuplicates) {
  Executor executor(cpu_options(1));
  Gate release;
  auto a = executor.submit(TrialSpec{}, [&](TrialContext&) {
    release.wait();
    return completed();
  });
  auto b = executor.submit(TrialSpec{}, [](TrialContext&) { return completed(); });
  EXPECT_GT(a.id(), 0);
  EXPECT_NE(a.id(), b.id());
  EXPECT_THROW(executor.submit(spec_with_id(a.id()), [](TrialContext&) { return completed(); }),
               Error);
  release.open();
  a.wait();
  b.wait();
  // Once final, the id may be reused (a retried trial keeps its store id).
  EXPECT_EQ(executor.submit(spec_with_id(a.id()), [](TrialContext&) { return completed(); })
                .outcome()
                .state,
            TrialState::completed);
}

// Each CPU slot is labelled as its own device (cpu:0, cpu:1), per rank, as GPUs are: two trials
// side by side on two CPU slots are stored as cpu:0 and cpu:1, never both cpu:0.
TEST(Executor, CpuSlotsAreLabelledOneByOne) {
  ExecutorOptions options;
  options.devices = {Device::cpu(), Device::cpu().on_rank(2)};
  options.cpu_slots = 2;
  Executor executor(options);
  std::vector<std::string> labels;
  for (const Slot& slot : executor.slots()) labels.push_back(slot.device.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"cpu:0", "cpu:1", "rank2:cpu:0", "rank2:cpu:1"}));

  Executor local(cpu_options(2));
  Gate both;
  std::atomic<int> arrived{0};
  std::vector<TrialFuture> futures;
  for (int i = 1; i <= 2; ++i)
    futures.push_back(local.submit(spec_with_id(i), [&](TrialContext&) {
      if (++arrived == 2) both.open();
      EXPECT_TRUE(both.wait());  // both run at once, so each holds its own slot
      return completed();
    }));
  std::set<std::string> used;
  for (const auto& f : futures) {
    f.wait();
    used.insert(f.device()->label());
  }
  EXPECT_EQ(used, (std::set<std::string>{"cpu:0", "cpu:1"}));
  // A remote rank pins a trial to the slot its coordinator chose: cpu:1 is one of them.
  TrialSpec pinned = spec_with_id(3);
  pinned.placement = {Device::cpu(1)};
  const TrialFuture on_one = local.submit(pinned, [](TrialContext&) { return completed(); });
  EXPECT_EQ(on_one.outcome().state, TrialState::completed);
  EXPECT_EQ(on_one.device()->label(), "cpu:1");
}

TEST(Executor, DevicesBecomeSlotsAndBadOptionsAreRejected) {
  ExecutorOptions options;
  options.devices = {Device::cuda(0), Device::cuda(1)};
  options.trials_per_gpu = 2;
  Executor executor(options);
  ASSERT_EQ(executor.slots().size(), 4u);
  EXPECT_EQ(executor.slots()[0].label(), "cuda:0#0");
  EXPECT_EQ(executor.slots()[3].label(), "cuda:1#1");
  EXPECT_EQ(Device::cuda(1).label(), "cuda:1");

  ExecutorOptions none;
  none.devices.clear();
  EXPECT_THROW(Executor{none}, Error);
  ExecutorOptions twice;
  twice.devices = {Device::cpu(), Device::cpu()};
  EXPECT_THROW(Executor{twice}, Error);
  EXPECT_THROW(Executor{cpu_options(0)}, Error);
  EXPECT_THROW(Executor(cpu_options(1, -1)), Error);
}

// Issue 5's "8 trials on 2 GPUs keep both busy", at the scheduler's level (no GPU needed: the
// devices are slots, the trials stand in for training): both devices run a trial at once, never
// two on one device (trials_per_gpu 1), and the 8 trials are shared out between them.
TEST(Executor, TwoGpusBothRunTrialsAtOnceOneEach) {
  ExecutorOptions options;
  options.devices = {Device::cuda(0), Device::cuda(1)};
  options.trials_per_gpu = 1;
  Executor executor(options);
  std::atomic<int> on_device[2] = {0, 0}, ran_on[2] = {0, 0}, running{0}, most{0};
  std::atomic<bool> shared{false};
  std::atomic<int> arrived{0};
  Gate both;
  std::vector<TrialSpec> specs;
  for (int i = 0; i < 8; ++i) specs.push_back(spec_with_id(i + 1));
  std::atomic<int> started{0};
  const auto outcomes = parfor(executor, specs, [&](TrialContext& context) {
    const Device& device = context.device();
    EXPECT_EQ(device.kind, DeviceKind::cuda);
    const int d = device.index;
    if (++on_device[d] > 1) shared = true;  // two trials on one GPU at once
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    if (started++ < 2) {  // the first two wait for each other: they must be on both GPUs at once
      if (++arrived == 2) both.open();
      EXPECT_TRUE(both.wait());
    } else {
      std::this_thread::sleep_for(5ms);  // a trial's worth of work, so both slots stay busy
    }
    ++ran_on[d];
    --running;
    --on_device[d];
    return completed();
  });
  for (const auto& o : outcomes) EXPECT_EQ(o.state, TrialState::completed);
  EXPECT_FALSE(shared.load()) << "two trials ran on one GPU at once";
  EXPECT_EQ(most.load(), 2);
  EXPECT_EQ(ran_on[0] + ran_on[1], 8);
  EXPECT_GE(ran_on[0].load(), 2) << "cuda:0 ran " << ran_on[0] << " of 8";
  EXPECT_GE(ran_on[1].load(), 2) << "cuda:1 ran " << ran_on[1] << " of 8";
}

TEST(Executor, ShutdownRunsWhatIsQueuedThenRejectsSubmits) {
  Executor executor(cpu_options(1));
  std::atomic<int> ran{0};
  std::vector<TrialFuture> futures;
  for (int i = 0; i < 5; ++i)
    futures.push_back(executor.submit(spec_with_id(i + 1), [&](TrialContext&) {
      ++ran;
      return completed();
    }));
  executor.shutdown();
  EXPECT_EQ(ran.load(), 5);
  for (auto& f : futures) EXPECT_TRUE(f.ready());
  EXPECT_THROW(executor.submit(spec_with_id(9), [](TrialContext&) { return completed(); }), Error);
  executor.shutdown();  // idempotent
}

TEST(Executor, FutureOutlivesItsExecutor) {
  TrialFuture future;
  EXPECT_FALSE(future.valid());
  EXPECT_THROW(future.ready(), Error);
  {
    Executor executor(cpu_options(1));
    future = executor.submit(spec_with_id(1), [](TrialContext&) { return completed(); });
  }
  EXPECT_EQ(future.outcome().state, TrialState::completed);
  EXPECT_FALSE(future.cancel());
}

}  // namespace
}  // namespace sweep::scheduler
