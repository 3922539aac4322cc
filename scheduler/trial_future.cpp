/*
 * trial_future.cpp — reading a trial's shared state. get() hands back a copy of the outcome (not a
 * reference) so a future may be read from many threads, many times, and rethrows the stored
 * exception_ptr each time, which std::future cannot do.
 */
#include "scheduler/trial_future.h"

#include "common/check.h"
#include "scheduler/detail/executor_core.h"
#include "scheduler/detail/trial_record.h"

namespace sweep::scheduler {

using detail::Phase;

TrialFuture::TrialFuture(std::shared_ptr<detail::TrialRecord> record)
    : record_(std::move(record)) {}

const detail::TrialRecord& TrialFuture::checked() const {
  if (!record_) throw Error("TrialFuture: this future is empty (default-constructed)");
  return *record_;
}

std::int64_t TrialFuture::id() const { return checked().spec.id; }
const TrialSpec& TrialFuture::spec() const { return checked().spec; }

bool TrialFuture::ready() const {
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  return r.phase == Phase::done;
}

void TrialFuture::wait() const {
  const auto& r = checked();
  std::unique_lock lock(r.mutex);
  r.changed_cv.wait(lock, [&] { return r.phase == Phase::done; });
}

bool TrialFuture::wait_for(std::chrono::duration<double> timeout) const {
  const auto& r = checked();
  std::unique_lock lock(r.mutex);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  return r.changed_cv.wait_until(lock, deadline, [&] { return r.phase == Phase::done; });
}

TrialOutcome TrialFuture::get() const {
  wait();
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  if (r.error) std::rethrow_exception(r.error);
  return r.outcome;
}

TrialOutcome TrialFuture::outcome() const {
  wait();
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  return r.outcome;
}

bool TrialFuture::cancel() const {
  checked();
  auto& r = *record_;
  bool was_queued = false;
  {
    std::lock_guard lock(r.mutex);
    if (r.phase == Phase::finishing || r.phase == Phase::done) return false;
    if (r.phase == Phase::queued) {
      r.phase = Phase::finishing;  // a worker popping it now sees it is no longer queued
      was_queued = true;
    }
  }
  if (was_queued) {
    r.complete(TrialOutcome{TrialState::cancelled, "cancelled before it started", {}}, nullptr);
    return true;
  }
  return r.request_stop(StopKind::cancel, "cancelled by the user");
}

TrialState TrialFuture::state() const {
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  switch (r.phase) {
    case Phase::queued:
      return TrialState::queued;
    case Phase::running:
    case Phase::finishing:
      return TrialState::running;
    case Phase::done:
      return r.outcome.state;
  }
  return TrialState::running;
}

std::string TrialFuture::wait_reason() const {
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  return r.phase == Phase::queued ? r.wait_reason : std::string();
}

std::optional<Device> TrialFuture::device() const {
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  return r.device;
}

TrialFuture::Progress TrialFuture::progress() const {
  const auto& r = checked();
  std::lock_guard lock(r.mutex);
  return {r.progress_fraction, r.progress_text};
}

bool TrialFuture::fetched() const { return checked().fetched.load(); }
void TrialFuture::set_fetched(bool fetched) const {
  checked();
  record_->fetched.store(fetched);
}

std::uint64_t TrialFuture::completion_sequence() const {
  return checked().completion_sequence.load();
}

}  // namespace sweep::scheduler
