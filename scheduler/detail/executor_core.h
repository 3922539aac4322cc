/*
 * executor_core.h — the executor's shared state (internal). Trial records hold a shared_ptr to it,
 * so a future outliving its Executor never dangles; the Executor object itself owns the threads
 * and joins them. Wait reasons are recomputed only at stable points (after a claim or a submit
 * that could not start), so a reason flips only when the situation really changes, never once per
 * finishing trial — with 10,000 queued trials, re-sending all reasons per finish would be O(n^2).
 */
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "scheduler/detail/trial_record.h"
#include "scheduler/executor.h"
#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler {

namespace detail {
// One entry of the queue: an ordinary trial (one record; its TrialFn in the record) or a fused
// array (its members' records, and the one ArrayFn that runs them all on one slot).
struct QueueEntry {
  std::vector<std::shared_ptr<TrialRecord>> records;
  ArrayFn array_fn;  // empty for an ordinary trial
};
}  // namespace detail

struct Executor::Core {
  using Clock = std::chrono::steady_clock;

  ExecutorOptions options;
  std::vector<std::shared_ptr<EventSink>> sinks;
  std::shared_ptr<StoppingPolicy> stopping_policy;
  std::vector<Slot> slots;
  std::size_t concurrency_limit = 0;  // min(max_concurrent, slots)

  std::mutex mutex;
  std::condition_variable work_cv;       // workers: a trial may start, or shutting down
  std::condition_variable idle_cv;       // wait_idle
  std::deque<detail::QueueEntry> queue;  // may hold entries whose trials were all cancelled
  // Trials (ExecutorStats) and entries (what asks for slots: a fused array is one entry).
  std::size_t queued_count = 0;     // records in the queue still in phase queued
  std::size_t queued_entries = 0;   // entries in the queue with a record still queued
  std::size_t running_count = 0;    // records whose function has not ended them (end_run)
  std::size_t running_entries = 0;  // slots whose worker is inside a TrialFn or ArrayFn
  std::size_t finished_count = 0;
  std::size_t completing_count = 0;  // inside TrialRecord::complete, waiters not yet woken
  // The trials each slot's worker runs: none, one, or a fused array's members.
  std::vector<std::vector<std::shared_ptr<detail::TrialRecord>>> running_by_slot;
  std::vector<bool> held;  // a slot lent to a multi-GPU trial running on another slot's worker
  std::unordered_map<std::int64_t, std::weak_ptr<detail::TrialRecord>> live_by_id;
  std::int64_t next_auto_id = 1;
  bool interrupted = false;
  std::string interrupt_reason;
  bool accepting = true;
  bool stopping = false;
  std::string current_wait_reason;

  std::vector<std::thread> workers;
  std::mutex shutdown_mutex;

  // Timeout watchdog.
  struct Deadline {
    Clock::time_point when;
    std::weak_ptr<detail::TrialRecord> record;
    bool force;  // false: set the stop token; true: complete the future as failed
    bool operator>(const Deadline& other) const { return when > other.when; }
  };
  std::mutex watchdog_mutex;
  std::condition_variable watchdog_cv;
  std::priority_queue<Deadline, std::vector<Deadline>, std::greater<>> deadlines;
  bool watchdog_stop = false;
  std::thread watchdog;

  // All below: called with `mutex` held unless the name says otherwise.
  std::string busy_reason_locked(std::size_t queued_ahead) const;
  bool can_start_locked() const;
  bool slot_free_locked(std::size_t slot) const {
    return running_by_slot[slot].empty() && !held[slot];
  }
  // The queue's head's slot needs: a fused array's members all share their first's gpus (1) and
  // placement.
  const TrialSpec& head_spec_locked() const { return queue.front().records.front()->spec; }
  // A queued record leaves the queue (claimed, cancelled or interrupted): the counts follow.
  void leave_queue_locked(const detail::TrialRecord& record);
  // The slots the queue's head would take with `own` as its first: one per GPU it needs, on
  // distinct CUDA devices, all free; empty when it cannot start from `own` now.
  std::vector<std::size_t> slots_for_head_locked(std::size_t own) const;
  // Placement (TrialSpec::placement): `own` must be its first device, the rest free slots of
  // exactly its other devices.
  std::vector<std::size_t> placed_slots_locked(std::size_t own,
                                               const std::vector<Device>& placement) const;
  std::size_t free_gpus_locked() const;   // CUDA devices with a free slot
  std::size_t free_slots_locked() const;  // slots neither running a trial nor lent to one
  // Recompute the shared wait reason; returns the records to notify when it changed.
  std::vector<std::shared_ptr<detail::TrialRecord>> refresh_wait_reason_locked();

  void worker_main(std::size_t slot_index);
  void run_trial(const std::shared_ptr<detail::TrialRecord>& record);
  void run_array(ArrayFn fn, const std::vector<std::shared_ptr<detail::TrialRecord>>& members);
  void watchdog_main();
  void add_deadline(Deadline deadline);

  // Called by TrialRecord::complete (no core lock held): the bookkeeping before its waiters
  // wake, then the end of the completion (for wait_idle).
  void on_record_completing(const detail::TrialRecord& record, bool was_queued);
  void on_record_completed();
  void notify_sinks_wait_reason(const std::vector<std::shared_ptr<detail::TrialRecord>>& records,
                                const std::string& reason);
};

namespace detail {
// Completes records that never ran as `interrupted` ("not started: executor interrupted (why)").
void end_not_started(const std::vector<std::shared_ptr<TrialRecord>>& records,
                     const std::string& why);
}  // namespace detail

}  // namespace sweep::scheduler
