/*
 * trial_future.h — a copyable handle on one submitted trial (MATLAB parfeval's Future, Taskflow's
 * tf::Future): poll it, wait on it, read its outcome, cancel it.
 *
 * Copies share one state, so a cancel() or the `fetched` mark made through one copy is seen
 * through all. get() rethrows the TrialFn's exception like std::future::get(), but may be called
 * any number of times; outcome() never throws and reports the same failure as state `failed`.
 * Every method is thread-safe.
 *
 *   auto future = executor.submit(spec, fn);
 *   if (!future.wait_for(std::chrono::seconds(5))) future.cancel();
 *   TrialOutcome outcome = future.outcome();   // cancelled, or however it ended
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/trial_state.h"
#include "scheduler/device.h"
#include "scheduler/trial.h"

namespace sweep::scheduler {

class TrialFuture {
 public:
  TrialFuture() = default;  // invalid: valid() is false, every other call throws sweep::Error
  explicit TrialFuture(std::shared_ptr<detail::TrialRecord> record);

  bool valid() const noexcept { return record_ != nullptr; }
  std::int64_t id() const;
  const TrialSpec& spec() const;

  bool ready() const;  // the trial reached a final state
  void wait() const;
  bool wait_for(std::chrono::duration<double> timeout) const;  // true when ready

  // The outcome; rethrows the TrialFn's exception when it threw. Blocks until ready.
  TrialOutcome get() const;
  // The outcome; never throws for a trial failure (a thrown exception reads as state failed).
  TrialOutcome outcome() const;

  // Queued → cancelled at once (never runs); running → stop token set (StopKind::cancel), the
  // outcome becomes `cancelled` when the TrialFn returns. Returns false when already final.
  bool cancel() const;

  // queued, running, or the final state.
  TrialState state() const;
  // Why a queued trial waits ("no free device: 2 of 2 cpu slots busy"); "" once it started.
  std::string wait_reason() const;
  std::optional<Device> device() const;  // set once started
  struct Progress {
    double fraction = 0;
    std::string text;
  };
  Progress progress() const;

  // MATLAB's Future.Read: fetch_next() sets it so each finished future is returned once.
  bool fetched() const;
  void set_fetched(bool fetched = true) const;
  // Global completion order (1, 2, ...) across all trials of the process; 0 while not final.
  std::uint64_t completion_sequence() const;

  const std::shared_ptr<detail::TrialRecord>& record() const noexcept { return record_; }

 private:
  const detail::TrialRecord& checked() const;
  std::shared_ptr<detail::TrialRecord> record_;
};

}  // namespace sweep::scheduler
