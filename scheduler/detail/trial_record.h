/*
 * trial_record.h — the shared state behind one submitted trial (internal; not part of the API).
 *
 * Three locks, always taken in this order and never the reverse: `events_mutex` (recursive; held
 * while calling sinks, so one trial's events are serialized and none follows on_finished), then
 * the executor core's mutex, and `mutex` (this record's fields) only briefly and never while
 * calling out. A worker claims a queued record under core mutex + record mutex, which is what
 * makes "exactly one worker runs it" and "cancelled while queued never runs" race-free.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include "scheduler/executor.h"
#include "scheduler/trial.h"

namespace sweep::scheduler::detail {

enum class Phase { queued, running, finishing, done };

// What the members of one fused array (Executor::submit_array) share while queued: the array is
// one entry of the queue, waiting for a slot (Core::queued_entries), while any member still is.
struct ArrayMembership {
  std::size_t still_queued = 0;  // guarded by the core mutex
};

struct TrialRecord {
  TrialRecord(TrialSpec trial_spec, TrialFn trial_fn, TrialCallbacks trial_callbacks,
              std::shared_ptr<Executor::Core> executor_core)
      : spec(std::move(trial_spec)),
        fn(std::move(trial_fn)),
        callbacks(std::move(trial_callbacks)),
        core(std::move(executor_core)) {}

  // Immutable after submit.
  const TrialSpec spec;
  TrialFn fn;  // touched only by the worker that claimed the record; reset when it returns
  const TrialCallbacks callbacks;
  const std::shared_ptr<Executor::Core> core;
  std::shared_ptr<ArrayMembership> array;  // null for an ordinary trial; set before it is shared

  // Guarded by `mutex`.
  mutable std::mutex mutex;
  mutable std::condition_variable changed_cv;  // phase → done, and stop requests
  Phase phase = Phase::queued;
  TrialOutcome outcome;
  std::exception_ptr error;
  std::string wait_reason;
  std::optional<Device> device;
  std::vector<Device> devices;  // set with `device` at claim
  std::string slot_label;
  double progress_fraction = 0;
  std::string progress_text;
  std::string stop_reason;
  // TrialContext::set_epochs, and the highest epoch the trial reported: once it reported its last
  // epoch, an early stop is refused (the trial has finished its work and ends as it returns).
  std::int64_t epochs = 0;
  std::int64_t reported_epoch = 0;

  // Lock-free reads for the TrialFn's hot loop.
  std::atomic<StopKind> stop_kind{StopKind::none};
  std::atomic<bool> stop_flag{false};
  std::atomic<bool> interrupt_flag{false};
  std::stop_source stop_source;

  std::recursive_mutex events_mutex;
  bool events_closed = false;  // guarded by events_mutex: on_finished was sent

  std::atomic<std::uint64_t> completion_sequence{0};
  std::atomic<bool> fetched{false};

  // First stop wins; false when already stopping or final, and for an early stop once the trial
  // reported a point of its last epoch (TrialContext::set_epochs).
  bool request_stop(StopKind kind, const std::string& reason);
  // queued → running on `device`; false if it was cancelled/interrupted meanwhile.
  // A multi-GPU trial passes all its devices (the first is `device`).
  bool claim(const std::vector<Device>& on_devices, const std::string& on_slot);
  // queued/running → finishing; false if someone else is already finishing it.
  bool begin_finish();
  // After begin_finish(): store the outcome, send on_finished, wake waiters, tell the core.
  void complete(TrialOutcome final_outcome, std::exception_ptr final_error);
  // The outcome its function gave, read as trial.h's TrialOutcome says once a stop was requested:
  // the stop wins (message = its reason), except over diverged. The one mapping of a returned
  // outcome, for a TrialFn's return and an ArrayFn's finish() alike.
  TrialOutcome with_requested_stop(TrialOutcome returned) const;
  // Its function is done with it (a TrialFn returned or threw; an ArrayFn finished it or
  // returned): it stops counting as running, then completes unless the timeout watchdog already
  // completed it (its slot stays busy until then, so it counted as running until now). True when
  // it completed it here.
  bool end_run(TrialOutcome final_outcome, std::exception_ptr final_error);
  // Queued → set the reason and tell sinks; ignored once started.
  void update_wait_reason(const std::string& reason);
};

// Process-wide "some trial completed" signal, for fetch_next / after_each over any futures.
struct CompletionSignal {
  std::mutex mutex;
  std::condition_variable cv;
  std::uint64_t epoch = 0;  // guarded by mutex
  std::atomic<std::uint64_t> next_sequence{1};
};
CompletionSignal& completion_signal();

}  // namespace sweep::scheduler::detail
