/*
 * test_helpers.h — shared pieces for the scheduler tests: an event-recording sink, a gate, trial
 * specs, CPU options, outcomes and stats checks, by the short names every test file uses.
 * Tests synchronize on gates and futures, never on sleeps, so they stay exact under sanitizers;
 * where a wait is unavoidable it has a generous bound and the test fails instead of hanging.
 */
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/json.h"
#include "scheduler/scheduler.h"

namespace sweep::scheduler::testing {

// A one-shot flag threads can wait on.
class Gate {
 public:
  // Notifies under the lock: a waiter then returns only after notify_all has, so it may destroy
  // the gate at once (notified after unlocking, the opener could still be inside notify_all when a
  // test ended and destroyed it: ThreadSanitizer, Executor.QueuedTrialsSayWhyTheyWait).
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  // True when opened within the timeout.
  bool wait(std::chrono::duration<double> timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Records every event as "kind:detail" per trial, in arrival order.
class RecordingSink : public EventSink {
 public:
  void on_queued(const TrialSpec& spec, const std::string& reason) override {
    add(spec.id, "queued:" + reason);
  }
  void on_wait_reason(const TrialSpec& spec, const std::string& reason) override {
    add(spec.id, "wait:" + reason);
  }
  void on_started(const TrialSpec& spec, const std::vector<Device>& devices) override {
    add(spec.id, "started:" + devices_label(devices));
  }
  void on_metric(const TrialSpec& spec, const MetricPoint& point) override {
    std::lock_guard lock(mutex_);
    events_[spec.id].push_back("metric:" + point.name);
    metrics_[spec.id].push_back(point);
  }
  void on_log(const TrialSpec& spec, std::string_view line) override {
    add(spec.id, "log:" + std::string(line));
  }
  void on_progress(const TrialSpec& spec, double fraction, const std::string& text) override {
    add(spec.id, "progress:" + text);
  }
  void on_finished(const TrialSpec& spec, const TrialOutcome& outcome,
                   const std::optional<Device>& device) override {
    add(spec.id, "finished:" + std::string(to_string(outcome.state)));
  }

  std::vector<std::string> events(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    auto it = events_.find(id);
    return it == events_.end() ? std::vector<std::string>{} : it->second;
  }
  std::vector<MetricPoint> metrics(std::int64_t id) const {
    std::lock_guard lock(mutex_);
    auto it = metrics_.find(id);
    return it == metrics_.end() ? std::vector<MetricPoint>{} : it->second;
  }
  std::vector<std::string> logs(std::int64_t id) const {
    std::vector<std::string> lines;
    for (const auto& event : events(id))
      if (event.rfind("log:", 0) == 0) lines.push_back(event.substr(4));
    return lines;
  }
  std::size_t count(std::int64_t id, const std::string& prefix) const {
    std::size_t n = 0;
    for (const auto& event : events(id))
      if (event.rfind(prefix, 0) == 0) ++n;
    return n;
  }

 private:
  void add(std::int64_t id, std::string event) {
    std::lock_guard lock(mutex_);
    events_[id].push_back(std::move(event));
  }
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::vector<std::string>> events_;
  std::map<std::int64_t, std::vector<MetricPoint>> metrics_;
};

inline TrialSpec spec_with_id(std::int64_t id, sweep::Json params = sweep::Json::object()) {
  TrialSpec spec;
  spec.id = id;
  spec.number = id;
  spec.name = "trial-" + std::to_string(id);
  spec.params = std::move(params);
  return spec;
}

inline ExecutorOptions cpu_options(int slots, int max_concurrent = 0) {
  ExecutorOptions options;
  options.devices = {Device::cpu()};
  options.cpu_slots = slots;
  options.max_concurrent = max_concurrent;
  return options;
}

inline TrialOutcome completed(sweep::Json summary = sweep::Json::object()) {
  return {TrialState::completed, "", std::move(summary)};
}

// Expects an executor with nothing queued or running and `finished` trials ended.
inline void expect_all_finished(const Executor& executor, std::size_t finished) {
  const ExecutorStats stats = executor.stats();
  EXPECT_EQ(stats.queued, 0u);
  EXPECT_EQ(stats.running, 0u);
  EXPECT_EQ(stats.finished, finished);
}

// Loops until told to stop, as a well-behaved TrialFn does.
inline TrialOutcome run_until_stopped(TrialContext& ctx) {
  while (!ctx.wait_for_stop(std::chrono::seconds(5))) {
  }
  return completed();
}

}  // namespace sweep::scheduler::testing

namespace sweep::scheduler {

// Every scheduler test lives in sweep::scheduler and calls these by their short names.
using namespace std::chrono_literals;
using testing::completed;
using testing::cpu_options;
using testing::expect_all_finished;
using testing::Gate;
using testing::RecordingSink;
using testing::run_until_stopped;
using testing::spec_with_id;

}  // namespace sweep::scheduler
