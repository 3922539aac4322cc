// Executor: stopping trials: cancel, interrupt, timeouts, stopping policies, the stop callback.
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

TEST(Executor, CancelQueuedTrialCompletesAtOnceAndNeverRuns) {
  Executor executor(cpu_options(1));
  Gate release, started;
  std::atomic<bool> b_ran{false}, c_ran{false};
  auto a = executor.submit(spec_with_id(1), [&](TrialContext&) {
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());
  auto b = executor.submit(spec_with_id(2), [&](TrialContext&) {
    b_ran = true;
    return completed();
  });
  auto c = executor.submit(spec_with_id(3), [&](TrialContext&) {
    c_ran = true;
    return completed();
  });
  EXPECT_TRUE(b.cancel());
  EXPECT_TRUE(b.ready());  // at once, while the slot is still busy
  EXPECT_EQ(b.state(), TrialState::cancelled);
  EXPECT_FALSE(b.cancel());  // already final
  EXPECT_TRUE(executor.cancel(3));
  EXPECT_FALSE(executor.cancel(3));
  EXPECT_FALSE(executor.cancel(999));
  release.open();
  EXPECT_EQ(a.outcome().state, TrialState::completed);
  executor.wait_idle();
  EXPECT_FALSE(b_ran);
  EXPECT_FALSE(c_ran);
  EXPECT_EQ(c.outcome().state, TrialState::cancelled);
  EXPECT_EQ(executor.stats().queued, 0u);
}

TEST(Executor, CancelRunningTrialSetsTheStopToken) {
  Executor executor(cpu_options(1));
  Gate started;
  std::atomic<int> kind_seen{-1};
  auto future = executor.submit(spec_with_id(1), [&](TrialContext& ctx) {
    started.open();
    run_until_stopped(ctx);
    kind_seen = static_cast<int>(ctx.stop_kind());
    return completed();
  });
  ASSERT_TRUE(started.wait());
  EXPECT_EQ(future.state(), TrialState::running);
  EXPECT_TRUE(future.cancel());
  const TrialOutcome outcome = future.outcome();
  EXPECT_EQ(outcome.state, TrialState::cancelled);
  EXPECT_EQ(outcome.message, "cancelled by the user");
  EXPECT_EQ(kind_seen.load(), static_cast<int>(StopKind::cancel));
}

TEST(Executor, InterruptStopsRunningAndDropsQueued) {
  Executor executor(cpu_options(1));
  Gate started;
  std::atomic<bool> flag_seen{false}, queued_ran{false};
  auto running = executor.submit(spec_with_id(1), [&](TrialContext& ctx) {
    started.open();
    run_until_stopped(ctx);
    flag_seen = ctx.interrupt_flag().load() && ctx.stop_kind() == StopKind::interrupt;
    return TrialOutcome{TrialState::completed, "", {{"checkpoint", "saved"}}};
  });
  ASSERT_TRUE(started.wait());
  auto queued = executor.submit(spec_with_id(2), [&](TrialContext&) {
    queued_ran = true;
    return completed();
  });
  executor.interrupt("Ctrl-C");
  EXPECT_TRUE(executor.interrupted());
  EXPECT_EQ(queued.outcome().state, TrialState::interrupted);
  const TrialOutcome outcome = running.outcome();
  EXPECT_EQ(outcome.state, TrialState::interrupted);
  EXPECT_EQ(outcome.message, "Ctrl-C");
  EXPECT_EQ(outcome.summary.at("checkpoint"), "saved");  // the TrialFn's summary is kept
  EXPECT_TRUE(flag_seen);
  executor.wait_idle();
  EXPECT_FALSE(queued_ran);
}

TEST(Executor, TimeoutStopsACooperativeTrialAsFailed) {
  Executor executor(cpu_options(1));
  TrialSpec spec = spec_with_id(1);
  spec.timeout_s = 0.1;
  auto future = executor.submit(spec, [](TrialContext& ctx) {
    run_until_stopped(ctx);
    EXPECT_EQ(ctx.stop_kind(), StopKind::timeout);
    return completed();
  });
  const TrialOutcome outcome = future.outcome();
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_EQ(outcome.message, "timed out after 0.1 s");
}

TEST(Executor, TrialIgnoringItsTimeoutCompletesAfterGraceButKeepsItsSlot) {
  auto sink = std::make_shared<RecordingSink>();
  ExecutorOptions options = cpu_options(1);
  options.timeout_grace_s = 0.05;
  Executor executor(options, {sink});
  Gate release, returned;
  TrialSpec spec = spec_with_id(1);
  spec.timeout_s = 0.05;
  auto stuck = executor.submit(spec, [&](TrialContext& ctx) {
    release.wait();  // ignores the stop token
    ctx.report("late_metric", 1, 1, 1);
    ctx.log("late line");
    returned.open();
    return completed();
  });
  const TrialOutcome outcome = stuck.outcome();  // completes without the TrialFn returning
  EXPECT_EQ(outcome.state, TrialState::failed);
  EXPECT_NE(outcome.message.find("timed out after 0.05 s; it did not return"), std::string::npos)
      << outcome.message;
  EXPECT_NE(outcome.message.find("cpu:0#0"), std::string::npos) << outcome.message;
  EXPECT_EQ(executor.stats().running, 1u);  // its thread still holds the slot
  auto next = executor.submit(spec_with_id(2), [](TrialContext&) { return completed(); });
  EXPECT_EQ(next.wait_reason(), "no free device: 1 of 1 cpu slots busy");
  release.open();
  ASSERT_TRUE(returned.wait());
  EXPECT_EQ(next.outcome().state, TrialState::completed);
  executor.wait_idle();
  EXPECT_EQ(stuck.outcome().state, TrialState::failed);  // its late return changes nothing
  const auto events = sink->events(1);
  EXPECT_EQ(events.back(), "finished:failed");
  EXPECT_EQ(sink->count(1, "metric"), 0u);  // dropped: reported after on_finished
  EXPECT_EQ(sink->count(1, "log"), 0u);
}

class StopBelow : public StoppingPolicy {
 public:
  StopDecision observe(std::int64_t, const MetricPoint& point) override {
    return point.value < 0.5 ? StopDecision::stop_because("test rule: below 0.5")
                             : StopDecision::keep_going();
  }
  std::string describe() const override { return "stop-below"; }
};

TEST(Executor, StoppingPolicyEndsTrialAsStoppedEarlyWithItsReason) {
  Executor executor(cpu_options(2), {}, std::make_shared<StopBelow>());
  auto curve = [](std::vector<double> values) {
    return [values](TrialContext& ctx) {
      int epoch = 0;
      for (double v : values) {
        if (ctx.should_stop()) break;
        ++epoch;
        ctx.report("val_accuracy", v, epoch, epoch);
      }
      return completed({{"epochs", epoch}});
    };
  };
  auto good = executor.submit(spec_with_id(1), curve({0.6, 0.7, 0.8}));
  auto bad = executor.submit(spec_with_id(2), curve({0.6, 0.4, 0.8}));
  EXPECT_EQ(good.outcome().state, TrialState::completed);
  const TrialOutcome stopped = bad.outcome();
  EXPECT_EQ(stopped.state, TrialState::stopped_early);
  EXPECT_EQ(stopped.message, "test rule: below 0.5");
  EXPECT_EQ(stopped.summary.at("epochs"), 2);
}

TEST(Executor, DivergedIsKeptEvenWhenAStopWasRequested) {
  Executor executor(cpu_options(1), {}, std::make_shared<StopBelow>());
  auto future = executor.submit(spec_with_id(1), [](TrialContext& ctx) {
    ctx.report("loss", 0.1, 1, 1);
    EXPECT_TRUE(ctx.should_stop());
    return TrialOutcome{TrialState::diverged, "loss became NaN", {}};
  });
  EXPECT_EQ(future.outcome().state, TrialState::diverged);
}

TEST(Executor, StopCallbackWakesATrialBlockedElsewhere) {
  Executor executor(cpu_options(1));
  Gate started;
  auto future = executor.submit(spec_with_id(1), [&](TrialContext& ctx) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    started.open();
    const bool stopped = cv.wait_for(lock, ctx.stop_token(), 20s, [] { return false; });
    EXPECT_FALSE(stopped);  // the predicate never holds: it returned because of the stop
    EXPECT_TRUE(ctx.stop_token().stop_requested());
    return completed();
  });
  ASSERT_TRUE(started.wait());
  future.cancel();
  EXPECT_EQ(future.outcome().state, TrialState::cancelled);
}

}  // namespace
}  // namespace sweep::scheduler
