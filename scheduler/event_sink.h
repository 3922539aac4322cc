/*
 * event_sink.h — everything the executor tells the outside world about trials (the SQLite store,
 * the live console, tests). Any number of sinks at once; every method has an empty default.
 *
 * Threading contract (the one non-obvious decision): sinks are called directly on the thread that
 * caused the event — submit()'s caller (on_queued), a worker thread (started / metric / log /
 * progress / finished), the caller of cancel() or interrupt() (finished for a queued trial), or
 * the executor's timeout watchdog (finished for a trial that ignored its timeout). So:
 *  - different trials' events arrive CONCURRENTLY: a sink must be thread-safe (a mutex around its
 *    state, or a queue to its own writer thread);
 *  - one trial's events are SERIALIZED and ORDERED: on_queued, then any on_wait_reason, then
 *    on_started, then metric/log/progress, then exactly one on_finished, and nothing after it;
 *    the executor holds a per-trial (recursive) lock during the call to guarantee this. A sink may
 *    call back into the Executor (cancel, stats), but must not block waiting for another trial's
 *    events;
 *  - keep calls short: on_metric runs on the trial's own thread, between its iterations.
 * Exceptions: from on_queued they propagate out of submit(); from on_started/on_metric/on_log/
 * on_progress into the trial (which then fails with that message); from on_wait_reason and
 * on_finished they are written to stderr and dropped (nobody could act on them there).
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "scheduler/device.h"
#include "scheduler/metric_point.h"
#include "scheduler/trial.h"

namespace sweep::scheduler {

class EventSink {
 public:
  virtual ~EventSink() = default;

  // wait_reason is "" when a slot is free and the trial starts at once.
  virtual void on_queued(const TrialSpec& spec, const std::string& wait_reason) {}
  // The reason a queued trial waits changed ("concurrency limit 4 reached", ...).
  virtual void on_wait_reason(const TrialSpec& spec, const std::string& reason) {}
  // `devices`: the trial's device, or every GPU of a multi-GPU trial (label: devices_label).
  virtual void on_started(const TrialSpec& spec, const std::vector<Device>& devices) {}
  virtual void on_metric(const TrialSpec& spec, const MetricPoint& point) {}
  virtual void on_log(const TrialSpec& spec, std::string_view line) {}
  virtual void on_progress(const TrialSpec& spec, double fraction, const std::string& text) {}
  // `device` is empty for a trial that never started (cancelled or interrupted while queued).
  virtual void on_finished(const TrialSpec& spec, const TrialOutcome& outcome,
                           const std::optional<Device>& device) {}
};

}  // namespace sweep::scheduler
