/*
 * trial_record.cpp — the state transitions of one trial: claim, stop, finish, and how its
 * function's result (returned, finished or thrown) reads as its final outcome.
 *
 * complete() wakes waiters only AFTER every sink has seen on_finished, so when future.get()
 * returns, the store already holds the final row (tests and the CLI rely on that).
 */
#include "scheduler/detail/trial_record.h"

#include <cstdio>
#include <exception>
#include <new>

#include "scheduler/detail/executor_core.h"

namespace sweep::scheduler::detail {

CompletionSignal& completion_signal() {
  static CompletionSignal signal;
  return signal;
}

namespace {

// Sinks called where no one could handle their exception: report on stderr and go on.
template <typename Call>
void call_and_report(const char* what, std::int64_t trial_id, Call&& call) noexcept {
  try {
    call();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sweep: event sink failed in %s for trial %lld: %s\n", what,
                 static_cast<long long>(trial_id), e.what());
  } catch (...) {
    std::fprintf(stderr, "sweep: event sink failed in %s for trial %lld\n", what,
                 static_cast<long long>(trial_id));
  }
}

}  // namespace

bool TrialRecord::request_stop(StopKind kind, const std::string& reason) {
  {
    std::lock_guard lock(mutex);
    if (phase == Phase::finishing || phase == Phase::done) return false;
    if (stop_kind.load() != StopKind::none) return false;
    // A rule that stops a trial at its last epoch stops nothing: it would only turn a finished
    // run into stopped_early (a stop relayed from another rank's rule is refused here too).
    if (kind == StopKind::early_stop && epochs > 0 && reported_epoch >= epochs) return false;
    stop_reason = reason;
    stop_kind.store(kind);
    if (kind == StopKind::interrupt) interrupt_flag.store(true);
    stop_flag.store(true);
  }
  changed_cv.notify_all();
  stop_source.request_stop();  // runs the TrialFn's std::stop_callbacks: outside our lock
  return true;
}

bool TrialRecord::claim(const std::vector<Device>& on_devices, const std::string& on_slot) {
  std::lock_guard lock(mutex);
  if (phase != Phase::queued) return false;
  phase = Phase::running;
  device = on_devices.front();
  devices = on_devices;
  slot_label = on_slot;
  wait_reason.clear();
  return true;
}

bool TrialRecord::begin_finish() {
  std::lock_guard lock(mutex);
  if (phase == Phase::finishing || phase == Phase::done) return false;
  phase = Phase::finishing;
  return true;
}

void TrialRecord::complete(TrialOutcome final_outcome, std::exception_ptr final_error) {
  bool was_queued = false;
  {
    std::lock_guard events(events_mutex);
    std::optional<Device> ran_on;
    {
      std::lock_guard lock(mutex);
      outcome = std::move(final_outcome);
      error = std::move(final_error);
      ran_on = device;
      was_queued = !device.has_value();
    }
    events_closed = true;
    for (const auto& sink : core->sinks)
      call_and_report("on_finished", spec.id, [&] { sink->on_finished(spec, outcome, ran_on); });
    if (callbacks.on_finished)
      call_and_report("on_finished callback", spec.id, [&] { callbacks.on_finished(outcome); });
  }
  // Counts first, then wake waiters: whoever returns from outcome() sees stats() agree.
  core->on_record_completing(*this, was_queued);
  auto& signal = completion_signal();
  {
    std::lock_guard lock(mutex);
    phase = Phase::done;  // and the sequence with it: fetch_next sees both or neither
    completion_sequence.store(signal.next_sequence.fetch_add(1));
  }
  changed_cv.notify_all();
  {
    std::lock_guard lock(signal.mutex);
    ++signal.epoch;
  }
  signal.cv.notify_all();
  core->on_record_completed();
}

TrialOutcome TrialRecord::with_requested_stop(TrialOutcome returned) const {
  StopKind stop;
  std::string reason;
  {
    std::lock_guard lock(mutex);
    stop = stop_kind.load();
    reason = stop_reason;
  }
  if (stop == StopKind::none || returned.state == TrialState::diverged) return returned;
  switch (stop) {
    case StopKind::early_stop:
      returned.state = TrialState::stopped_early;
      break;
    case StopKind::cancel:
      returned.state = TrialState::cancelled;
      break;
    case StopKind::interrupt:
      returned.state = TrialState::interrupted;
      break;
    case StopKind::timeout:
      returned.state = TrialState::failed;
      break;
    case StopKind::none:
      break;
  }
  returned.message = std::move(reason);
  return returned;
}

bool TrialRecord::end_run(TrialOutcome final_outcome, std::exception_ptr final_error) {
  {
    std::lock_guard lock(core->mutex);
    --core->running_count;
  }
  if (!begin_finish()) return false;
  complete(std::move(final_outcome), std::move(final_error));
  return true;
}

void TrialRecord::update_wait_reason(const std::string& reason) {
  std::lock_guard events(events_mutex);
  {
    std::lock_guard lock(mutex);
    if (phase != Phase::queued || wait_reason == reason) return;
    wait_reason = reason;
  }
  for (const auto& sink : core->sinks)
    call_and_report("on_wait_reason", spec.id, [&] { sink->on_wait_reason(spec, reason); });
}

}  // namespace sweep::scheduler::detail

namespace sweep::scheduler {

TrialOutcome failure_outcome(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    return {TrialState::failed, "out of memory", sweep::Json::object()};
  } catch (const std::exception& e) {
    return {TrialState::failed, e.what(), sweep::Json::object()};
  } catch (...) {
    return {TrialState::failed, "unknown exception (not derived from std::exception)",
            sweep::Json::object()};
  }
}

}  // namespace sweep::scheduler
