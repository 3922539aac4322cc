// Executor: fused arrays (submit_array) — K trials run by one function on one slot, each member
// still a trial of its own: queue position, claiming, per-member stops, cancel, interrupt,
// timeouts, failures, and refused input. Synchronized on gates and futures, never on sleeps.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include "common/check.h"
#include "test_helpers.h"

namespace sweep::scheduler {
namespace {

std::vector<TrialSpec> specs_with_ids(const std::vector<std::int64_t>& ids) {
  std::vector<TrialSpec> specs;
  for (std::int64_t id : ids) specs.push_back(spec_with_id(id));
  return specs;
}

std::vector<std::int64_t> ids_of(const std::vector<TrialContext*>& members) {
  std::vector<std::int64_t> ids;
  for (const TrialContext* member : members) ids.push_back(member->spec().id);
  return ids;
}

// Finishes every member `completed`, reporting its index in the summary.
void finish_all(const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
  for (std::size_t i = 0; i < members.size(); ++i) finish(i, completed({{"member", i}}));
}

// The thread each trial's on_started arrived on.
class StartThreadSink : public EventSink {
 public:
  void on_started(const TrialSpec& spec, const std::vector<Device>&) override {
    std::lock_guard lock(mutex_);
    threads_[spec.id] = std::this_thread::get_id();
  }
  std::thread::id thread_of(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    return threads_.at(id);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::thread::id> threads_;
};

TEST(ExecutorArray, RunsEveryMemberInOneCallOnOneSlotInSpecOrder) {
  auto sink = std::make_shared<RecordingSink>();
  auto threads = std::make_shared<StartThreadSink>();
  Executor executor(cpu_options(2), {sink, threads});
  std::atomic<int> calls{0};
  std::vector<std::int64_t> seen_ids;
  std::vector<Device> seen_devices;
  std::thread::id fn_thread;
  auto futures = executor.submit_array(
      specs_with_ids({11, 12, 13, 14}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        ++calls;
        fn_thread = std::this_thread::get_id();
        seen_ids = ids_of(members);
        for (const TrialContext* member : members) seen_devices.push_back(member->device());
        for (std::size_t i = 0; i < members.size(); ++i)
          members[i]->report("loss", 1.0 / double(i + 1), 1, 1);
        finish_all(members, finish);
      });
  ASSERT_EQ(futures.size(), 4u);
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const TrialOutcome outcome = futures[i].get();
    EXPECT_EQ(outcome.state, TrialState::completed);
    EXPECT_EQ(outcome.summary.at("member"), i);
    EXPECT_EQ(futures[i].id(), 11 + std::int64_t(i));
  }
  executor.wait_idle();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(seen_ids, (std::vector<std::int64_t>{11, 12, 13, 14}));
  ASSERT_EQ(seen_devices.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(seen_devices[i], seen_devices[0]);  // one slot for all
    EXPECT_EQ(futures[i].device(), seen_devices[0]);
    EXPECT_EQ(threads->thread_of(11 + std::int64_t(i)), fn_thread);  // the worker's thread
  }
  EXPECT_NE(fn_thread, std::this_thread::get_id());
  for (std::int64_t id = 11; id <= 14; ++id)
    EXPECT_EQ(sink->events(id),
              (std::vector<std::string>{"queued:", "started:" + seen_devices[0].label(),
                                        "metric:loss", "finished:completed"}))
        << "trial " << id;
  expect_all_finished(executor, 4);
}

TEST(ExecutorArray, AutoIdsAndPlacementAsForOneTrial) {
  Executor executor(cpu_options(3));
  std::vector<TrialSpec> specs(3);
  for (auto& spec : specs) spec.placement = {Device::cpu(2)};
  std::vector<Device> seen;
  auto futures = executor.submit_array(
      specs, [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        for (const TrialContext* member : members) seen.push_back(member->device());
        finish_all(members, finish);
      });
  std::set<std::int64_t> ids;
  for (auto& future : futures) {
    EXPECT_EQ(future.outcome().state, TrialState::completed);
    ids.insert(future.id());
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_GT(*ids.begin(), 0);
  EXPECT_EQ(seen, (std::vector<Device>(3, Device::cpu(2))));
}

TEST(ExecutorArray, IsOneEntryOfTheFifoQueue) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(1), {sink});
  std::mutex order_mutex;
  std::vector<std::string> order;
  auto ran = [&](const std::string& what) {
    std::lock_guard lock(order_mutex);
    order.push_back(what);
  };
  Gate started, release;
  auto before = executor.submit(spec_with_id(1), [&](TrialContext&) {
    ran("before");
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());
  auto array = executor.submit_array(
      specs_with_ids({2, 3, 4}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        ran("array");
        finish_all(members, finish);
      });
  auto after = executor.submit(spec_with_id(5), [&](TrialContext&) {
    ran("after");
    return completed();
  });
  // The array asks for one slot, so the trial behind it waits for one entry, not three.
  EXPECT_EQ(array[0].wait_reason(), "no free device: 1 of 1 cpu slots busy");
  EXPECT_EQ(after.wait_reason(), "no free device: 1 of 1 cpu slots busy");
  EXPECT_EQ(executor.stats().queued, 4u);  // trials, not entries
  release.open();
  EXPECT_EQ(after.outcome().state, TrialState::completed);
  for (auto& member : array) EXPECT_EQ(member.outcome().state, TrialState::completed);
  EXPECT_EQ(order, (std::vector<std::string>{"before", "array", "after"}));
  EXPECT_EQ(sink->events(3).front(), "queued:no free device: 1 of 1 cpu slots busy");
}

TEST(ExecutorArray, CountsAsOneRunningEntryAgainstMaxConcurrent) {
  Executor executor(cpu_options(2, /*max_concurrent=*/2));
  Gate array_started, single_started, release;
  auto array = executor.submit_array(
      specs_with_ids({1, 2, 3}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        array_started.open();
        release.wait();
        finish_all(members, finish);
      });
  auto single = executor.submit(spec_with_id(4), [&](TrialContext&) {
    single_started.open();
    release.wait();
    return completed();
  });
  // Both start: three members take one slot, not three of the cap of two.
  ASSERT_TRUE(array_started.wait());
  ASSERT_TRUE(single_started.wait());
  EXPECT_EQ(executor.stats().running, 4u);
  EXPECT_EQ(executor.stats().queued, 0u);
  release.open();
  EXPECT_EQ(single.outcome().state, TrialState::completed);
  for (auto& member : array) EXPECT_EQ(member.outcome().state, TrialState::completed);
}

// A stopping rule with a fixed verdict: stops one trial from epoch 2 on.
class StopOneTrial : public StoppingPolicy {
 public:
  explicit StopOneTrial(std::int64_t id) : id_(id) {}
  StopDecision observe(std::int64_t trial_id, const MetricPoint& point) override {
    if (trial_id == id_ && point.epoch >= 2)
      return StopDecision::stop_because("test rule: trial " + std::to_string(id_) + " lags");
    return StopDecision::keep_going();
  }
  std::string describe() const override { return "stop one trial"; }

 private:
  std::int64_t id_;
};

TEST(ExecutorArray, AStoppingRuleStopsOnlyItsMember) {
  Executor executor(cpu_options(1), {}, std::make_shared<StopOneTrial>(3));
  // A fused loop: each epoch trains the members still active; a stopped member is finished at
  // once (from a thread of the function's own: finish may be called from any).
  auto futures = executor.submit_array(
      specs_with_ids({1, 2, 3, 4}),
      [](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        std::vector<bool> active(members.size(), true);
        for (int epoch = 1; epoch <= 4; ++epoch)
          for (std::size_t i = 0; i < members.size(); ++i) {
            if (!active[i]) continue;
            members[i]->report("val_accuracy", 0.5, epoch, epoch);
            if (members[i]->should_stop() || epoch == 4) {
              active[i] = false;
              std::thread([&, i, epoch] { finish(i, completed({{"epochs", epoch}})); }).join();
            }
          }
      });
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const TrialOutcome outcome = futures[i].outcome();
    if (i == 2) {
      EXPECT_EQ(outcome.state, TrialState::stopped_early);
      EXPECT_EQ(outcome.message, "test rule: trial 3 lags");
      EXPECT_EQ(outcome.summary.at("epochs"), 2);
    } else {
      EXPECT_EQ(outcome.state, TrialState::completed) << outcome.message;
      EXPECT_EQ(outcome.summary.at("epochs"), 4);
    }
  }
}

TEST(ExecutorArray, AFinishedMemberCompletesWhileTheOthersStillRun) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(1), {sink});
  Gate release;
  std::string stop_reason_seen;
  auto futures = executor.submit_array(
      specs_with_ids({1, 2, 3}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        finish(0, completed({{"early", true}}));
        release.wait();
        stop_reason_seen = members[1]->stop_reason();
        finish(1, completed());  // stopped meanwhile: the stop wins
        finish(2, completed());
      });
  // get() returns while the function still holds members 1 and 2 (it waits for `release`).
  EXPECT_EQ(futures[0].get().summary.at("early"), true);
  EXPECT_EQ(sink->events(1).back(), "finished:completed");
  EXPECT_EQ(futures[1].state(), TrialState::running);
  EXPECT_EQ(executor.stats().running, 2u);
  EXPECT_EQ(executor.stats().finished, 1u);
  EXPECT_TRUE(executor.stop(2, StopKind::early_stop, "stopped by the test"));
  EXPECT_FALSE(executor.stop(1, StopKind::early_stop, "too late"));  // already final
  release.open();
  EXPECT_EQ(futures[1].outcome().state, TrialState::stopped_early);
  EXPECT_EQ(futures[1].outcome().message, "stopped by the test");
  EXPECT_EQ(futures[2].outcome().state, TrialState::completed);
  executor.wait_idle();
  EXPECT_EQ(stop_reason_seen, "stopped by the test");
  EXPECT_EQ(futures[0].outcome().state, TrialState::completed);
}

TEST(ExecutorArray, AMemberCancelledWhileQueuedIsLeftOut) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(1), {sink});
  Gate started, release;
  auto blocker = executor.submit(spec_with_id(1), [&](TrialContext&) {
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());  // the only slot is taken: what follows stays queued
  std::vector<std::int64_t> given;
  auto futures = executor.submit_array(
      specs_with_ids({2, 3, 4, 5}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        given = ids_of(members);
        finish_all(members, finish);
      });
  EXPECT_TRUE(futures[1].cancel());
  EXPECT_EQ(futures[1].outcome().state, TrialState::cancelled);  // at once, not with the array
  EXPECT_EQ(executor.stats().queued, 3u);
  release.open();
  for (std::size_t i : {0u, 2u, 3u}) {
    const TrialOutcome outcome = futures[i].outcome();
    EXPECT_EQ(outcome.state, TrialState::completed);
    EXPECT_EQ(outcome.summary.at("member"), i == 0 ? 0 : i - 1);  // its index among the 3 given
  }
  EXPECT_EQ(given, (std::vector<std::int64_t>{2, 4, 5}));
  EXPECT_EQ(sink->count(3, "started:"), 0u);
  EXPECT_EQ(sink->events(3).back(), "finished:cancelled");
  EXPECT_EQ(blocker.outcome().state, TrialState::completed);
}

TEST(ExecutorArray, AnArrayWithEveryMemberCancelledNeverRuns) {
  Executor executor(cpu_options(1));
  Gate started, release;
  auto blocker = executor.submit(spec_with_id(1), [&](TrialContext&) {
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());  // the only slot is taken: what follows stays queued
  std::atomic<bool> called{false};
  auto futures = executor.submit_array(
      specs_with_ids({2, 3}),
      [&](const std::vector<TrialContext*>&, const ArrayFinish&) { called = true; });
  EXPECT_TRUE(executor.cancel(2));
  EXPECT_TRUE(futures[1].cancel());
  EXPECT_EQ(executor.stats().queued, 0u);
  release.open();
  executor.wait_idle();
  EXPECT_FALSE(called.load());
  for (auto& future : futures) EXPECT_EQ(future.outcome().state, TrialState::cancelled);
  // The slot is free again: the dead entry does not hold it.
  EXPECT_EQ(
      executor.submit(spec_with_id(4), [](TrialContext&) { return completed(); }).outcome().state,
      TrialState::completed);
  EXPECT_EQ(blocker.outcome().state, TrialState::completed);
  EXPECT_EQ(executor.stats().running, 0u);
}

TEST(ExecutorArray, CancellingARunningMemberStopsOnlyIt) {
  Executor executor(cpu_options(1));
  Gate started;
  std::vector<StopKind> kinds;
  auto futures = executor.submit_array(
      specs_with_ids({1, 2, 3}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        started.open();
        EXPECT_TRUE(members[1]->wait_for_stop(20s));
        for (const TrialContext* member : members) kinds.push_back(member->stop_kind());
        finish_all(members, finish);
      });
  ASSERT_TRUE(started.wait());
  EXPECT_TRUE(futures[1].cancel());
  EXPECT_EQ(futures[1].outcome().state, TrialState::cancelled);
  EXPECT_EQ(futures[1].outcome().message, "cancelled by the user");
  EXPECT_EQ(futures[0].outcome().state, TrialState::completed);
  EXPECT_EQ(futures[2].outcome().state, TrialState::completed);
  EXPECT_EQ(kinds, (std::vector<StopKind>{StopKind::none, StopKind::cancel, StopKind::none}));
}

TEST(ExecutorArray, InterruptStopsRunningMembersAndEndsAQueuedArray) {
  auto sink = std::make_shared<RecordingSink>();
  Executor executor(cpu_options(1), {sink});
  Gate started;
  std::vector<StopKind> kinds;
  auto running = executor.submit_array(
      specs_with_ids({1, 2}),
      [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        started.open();
        for (std::size_t i = 0; i < members.size(); ++i) {
          EXPECT_TRUE(members[i]->wait_for_stop(20s));
          kinds.push_back(members[i]->stop_kind());
          EXPECT_TRUE(members[i]->interrupt_flag().load());
          finish(i, completed());  // "checkpointed": ends interrupted
        }
      });
  std::atomic<bool> queued_ran{false};
  auto queued = executor.submit_array(
      specs_with_ids({3, 4, 5}),
      [&](const std::vector<TrialContext*>&, const ArrayFinish&) { queued_ran = true; });
  ASSERT_TRUE(started.wait());
  executor.interrupt("Ctrl-C");
  for (auto& member : queued) {
    EXPECT_EQ(member.outcome().state, TrialState::interrupted);
    EXPECT_EQ(member.outcome().message, "not started: executor interrupted (Ctrl-C)");
  }
  for (auto& member : running) {
    EXPECT_EQ(member.outcome().state, TrialState::interrupted);
    EXPECT_EQ(member.outcome().message, "Ctrl-C");
  }
  executor.wait_idle();
  EXPECT_FALSE(queued_ran.load());
  EXPECT_EQ(kinds, (std::vector<StopKind>{StopKind::interrupt, StopKind::interrupt}));
  EXPECT_EQ(sink->count(4, "started:"), 0u);
  // Later arrays end interrupted at once.
  auto later = executor.submit_array(specs_with_ids({6}), finish_all);
  EXPECT_EQ(later[0].outcome().state, TrialState::interrupted);
  expect_all_finished(executor, 6);
}

TEST(ExecutorArray, AThrowFailsTheUnfinishedMembersAndOneRethrows) {
  Executor executor(cpu_options(1));
  auto futures = executor.submit_array(
      specs_with_ids({1, 2, 3}), [](const std::vector<TrialContext*>&, const ArrayFinish& finish) {
        finish(0, completed());
        throw std::runtime_error("fused boom");
      });
  EXPECT_EQ(futures[0].get().state, TrialState::completed);  // kept
  EXPECT_THROW(futures[1].get(), std::runtime_error);        // the first unfinished rethrows
  EXPECT_NO_THROW(futures[2].get());                         // the others just fail
  for (std::size_t i : {1u, 2u}) {
    EXPECT_EQ(futures[i].outcome().state, TrialState::failed);
    EXPECT_EQ(futures[i].outcome().message, "fused boom");
  }

  auto oom = executor.submit_array(
      specs_with_ids({4, 5}),
      [](const std::vector<TrialContext*>&, const ArrayFinish&) { throw std::bad_alloc(); });
  EXPECT_THROW(oom[0].get(), std::bad_alloc);
  EXPECT_EQ(oom[1].get().message, "out of memory");
}

TEST(ExecutorArray, AMemberLeftUnfinishedFailsAndFinishRefusesMisuse) {
  Executor executor(cpu_options(1));
  std::atomic<int> refused{0};
  std::optional<ArrayFinish> kept;
  auto futures = executor.submit_array(
      specs_with_ids({1, 2, 3}), [&](const std::vector<TrialContext*>&, const ArrayFinish& finish) {
        kept = finish;
        finish(0, completed());
        try {
          finish(0, completed());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("called twice"), std::string::npos) << e.what();
          ++refused;
        }
        try {
          finish(3, completed());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
          ++refused;
        }
        finish(2, completed());
      });
  EXPECT_EQ(futures[0].get().state, TrialState::completed);
  EXPECT_EQ(futures[2].get().state, TrialState::completed);
  const TrialOutcome left = futures[1].get();  // no exception to rethrow
  EXPECT_EQ(left.state, TrialState::failed);
  EXPECT_EQ(left.message, "the fused array ended without a result for this trial");
  executor.wait_idle();
  EXPECT_EQ(refused.load(), 2);
  ASSERT_TRUE(kept.has_value());
  EXPECT_THROW((*kept)(1, completed()), Error);  // after the function returned
  EXPECT_EQ(futures[1].outcome().state, TrialState::failed);
}

TEST(ExecutorArray, AMemberTimesOutAlone) {
  Executor executor(cpu_options(1));
  std::vector<TrialSpec> specs = specs_with_ids({1, 2, 3});
  specs[1].timeout_s = 0.05;
  StopKind seen = StopKind::none;
  auto futures = executor.submit_array(
      specs, [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        EXPECT_TRUE(members[1]->wait_for_stop(20s));
        seen = members[1]->stop_kind();
        EXPECT_FALSE(members[0]->should_stop());
        finish_all(members, finish);
      });
  EXPECT_EQ(futures[1].outcome().state, TrialState::failed);
  EXPECT_EQ(futures[1].outcome().message, "timed out after 0.05 s");
  EXPECT_EQ(futures[0].outcome().state, TrialState::completed);
  EXPECT_EQ(futures[2].outcome().state, TrialState::completed);
  EXPECT_EQ(seen, StopKind::timeout);
}

TEST(ExecutorArray, AMemberIgnoringItsTimeoutIsCompletedAfterGrace) {
  ExecutorOptions options = cpu_options(1);
  options.timeout_grace_s = 0.05;
  Executor executor(options);
  std::vector<TrialSpec> specs = specs_with_ids({1, 2, 3});
  specs[1].timeout_s = 0.05;
  Gate release;
  auto futures = executor.submit_array(
      specs, [&](const std::vector<TrialContext*>& members, const ArrayFinish& finish) {
        release.wait();               // ignores every stop
        finish_all(members, finish);  // member 1 was completed meanwhile: its result is dropped
      });
  const TrialOutcome forced = futures[1].outcome();  // without the function returning
  EXPECT_EQ(forced.state, TrialState::failed);
  EXPECT_NE(forced.message.find("timed out after 0.05 s; it did not return"), std::string::npos)
      << forced.message;
  EXPECT_EQ(futures[0].state(), TrialState::running);
  EXPECT_EQ(executor.stats().running, 3u);  // the function still holds all three
  release.open();
  EXPECT_EQ(futures[0].outcome().state, TrialState::completed);
  EXPECT_EQ(futures[2].outcome().state, TrialState::completed);
  executor.wait_idle();
  EXPECT_EQ(futures[1].outcome().message, forced.message);
}

TEST(ExecutorArray, RefusesWhatCannotShareOneSlot) {
  ExecutorOptions options;
  options.devices = {Device::cuda(0), Device::cuda(1)};  // fake: the executor never touches CUDA
  Executor executor(options);
  auto expect_error = [](auto&& call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "no error; expected one saying: " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const ArrayFn fn = finish_all;
  std::vector<TrialSpec> two_gpus = specs_with_ids({1, 2});
  two_gpus[1].gpus = 2;
  expect_error([&] { executor.submit_array(two_gpus, fn); }, "trial 2 asks for 2 GPUs");
  std::vector<TrialSpec> placed = specs_with_ids({1, 2});
  placed[0].placement = {Device::cuda(1)};
  expect_error([&] { executor.submit_array(placed, fn); },
               "trial 1 is placed on cuda:1 and trial 2 on any slot");
  expect_error(
      [&] {
        executor.submit_array(specs_with_ids({1, 2}), fn, {TrialCallbacks{}});
      },
      "1 callbacks for 2 trials");
  expect_error([&] { executor.submit_array({}, fn); }, "at least one trial");
  expect_error([&] { executor.submit_array(specs_with_ids({1}), nullptr); }, "ArrayFn is empty");
  expect_error(
      [&] {
        executor.submit_array(specs_with_ids({1, 1}), fn);
      },
      "trial id 1 is already queued or running");

  Gate started, release;
  auto live = executor.submit(spec_with_id(5), [&](TrialContext&) {
    started.open();
    release.wait();
    return completed();
  });
  ASSERT_TRUE(started.wait());
  expect_error(
      [&] {
        executor.submit_array(specs_with_ids({7, 5}), fn);
      },
      "trial id 5 is already queued or running");
  // Nothing of a refused array stays: its other ids are free, nothing is counted.
  EXPECT_EQ(executor.stats().queued, 0u);
  auto seven = executor.submit_array(specs_with_ids({7}), fn);
  release.open();
  EXPECT_EQ(seven[0].outcome().state, TrialState::completed);
  EXPECT_EQ(live.outcome().state, TrialState::completed);
}

// A store whose disk fills at one trial's on_queued.
class RefusingSink : public RecordingSink {
 public:
  void on_queued(const TrialSpec& spec, const std::string& reason) override {
    if (spec.id == 2) throw std::runtime_error("disk full");
    RecordingSink::on_queued(spec, reason);
  }
};

TEST(ExecutorArray, ASinkRefusingOnQueuedFailsTheSubmitAndLeavesNoTrialQueued) {
  auto sink = std::make_shared<RefusingSink>();
  Executor executor(cpu_options(1), {sink});
  std::atomic<bool> called{false};
  EXPECT_THROW(
      executor.submit_array(specs_with_ids({1, 2, 3}), [&](const std::vector<TrialContext*>&,
                                                           const ArrayFinish&) { called = true; }),
      std::runtime_error);
  // Trial 1 was told queued, so it is told how it ended; trial 3 was never told anything.
  EXPECT_EQ(sink->events(1), (std::vector<std::string>{"queued:", "finished:failed"}));
  EXPECT_TRUE(sink->events(3).empty());
  executor.wait_idle();
  EXPECT_FALSE(called.load());
  const ExecutorStats stats = executor.stats();
  EXPECT_EQ(stats.queued, 0u);
  EXPECT_EQ(stats.finished, 1u);
  EXPECT_EQ(
      executor.submit(spec_with_id(3), [](TrialContext&) { return completed(); }).outcome().state,
      TrialState::completed);
}

}  // namespace
}  // namespace sweep::scheduler
