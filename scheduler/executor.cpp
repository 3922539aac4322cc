/*
 * executor.cpp — worker threads (one per slot), the FIFO queue, the timeout watchdog.
 *
 * A worker that finishes a trial takes the next one in the same critical section in which it
 * released its slot, so the "all slots busy" situation never flickers and queued trials are not
 * re-told their wait reason after every finish. The watchdog is one thread for all trials: a heap
 * of deadlines, first the stop request, then (after timeout_grace_s) the forced completion.
 *
 * A queue entry is one trial or one fused array. An array's members are claimed together by the
 * worker that takes it and are trials everywhere else (stats, stops, deadlines, completion), but
 * the entry asks for one slot: so the core counts both trials and entries, and the wait reasons
 * and max_concurrent read the entries.
 */
#include "scheduler/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <new>
#include <set>
#include <sstream>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "scheduler/detail/executor_core.h"
#include "scheduler/detail/trial_record.h"

namespace sweep::scheduler {

using detail::Phase;
using detail::TrialRecord;

namespace {

std::chrono::steady_clock::duration to_clock(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(seconds));
}

}  // namespace

void detail::end_not_started(const std::vector<std::shared_ptr<TrialRecord>>& records,
                             const std::string& why) {
  for (const auto& record : records)
    if (record->begin_finish())
      record->complete({TrialState::interrupted, "not started: executor interrupted (" + why + ")",
                        sweep::Json::object()},
                       nullptr);
}

// ---- Core: wait reasons ------------------------------------------------------------------------

std::string Executor::Core::busy_reason_locked(std::size_t queued_ahead) const {
  if (interrupted) return "executor interrupted";
  if (!queue.empty() && head_spec_locked().gpus > 1 && running_entries < concurrency_limit)
    return "needs " + std::to_string(head_spec_locked().gpus) + " GPUs, " +
           std::to_string(free_gpus_locked()) + " free";
  const std::size_t total = slots.size();
  if (concurrency_limit < total)
    return "concurrency limit " + std::to_string(concurrency_limit) + " reached";
  bool any_cpu = false, any_cuda = false;
  for (const auto& slot : slots) (slot.device.kind == DeviceKind::cpu ? any_cpu : any_cuda) = true;
  const char* kind = any_cpu && any_cuda ? "device" : any_cpu ? "cpu" : "cuda";
  const std::size_t busy = std::min(total, total - free_slots_locked() + queued_ahead);
  return "no free device: " + std::to_string(busy) + " of " + std::to_string(total) + " " + kind +
         " slots busy";
}

bool Executor::Core::can_start_locked() const {
  if (interrupted || queue.empty() || running_entries >= concurrency_limit) return false;
  const int gpus = head_spec_locked().gpus;
  if (gpus > 1) return free_gpus_locked() >= static_cast<std::size_t>(gpus);
  return free_slots_locked() > 0;
}

std::size_t Executor::Core::free_slots_locked() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) n += slot_free_locked(i) ? 1 : 0;
  return n;
}

std::size_t Executor::Core::free_gpus_locked() const {
  std::vector<std::pair<int, int>> seen;  // (rank, index): GPUs of different ranks are different
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const Device& d = slots[i].device;
    if (d.kind == DeviceKind::cuda && slot_free_locked(i) &&
        std::find(seen.begin(), seen.end(), std::pair{d.rank, d.index}) == seen.end())
      seen.emplace_back(d.rank, d.index);
  }
  return seen.size();
}

std::vector<std::size_t> Executor::Core::slots_for_head_locked(std::size_t own) const {
  if (!slot_free_locked(own)) return {};
  const TrialSpec& head = head_spec_locked();
  if (!head.placement.empty()) return placed_slots_locked(own, head.placement);
  const int gpus = head.gpus;
  std::vector<std::size_t> taken = {own};
  if (gpus <= 1) return taken;
  const Device& first = slots[own].device;
  if (first.kind != DeviceKind::cuda) return {};
  // A multi-GPU trial's GPUs are of one process (rank): its replicas talk through NCCL there.
  for (std::size_t i = 0; i < slots.size() && taken.size() < std::size_t(gpus); ++i) {
    const Device& d = slots[i].device;
    if (i == own || !slot_free_locked(i) || d.kind != DeviceKind::cuda || d.rank != first.rank)
      continue;
    const bool new_device = std::none_of(taken.begin(), taken.end(), [&](std::size_t t) {
      return slots[t].device.index == d.index;
    });
    if (new_device) taken.push_back(i);
  }
  return taken.size() == std::size_t(gpus) ? taken : std::vector<std::size_t>{};
}

std::vector<std::size_t> Executor::Core::placed_slots_locked(
    std::size_t own, const std::vector<Device>& placement) const {
  if (!(slots[own].device == placement.front())) return {};
  std::vector<std::size_t> taken = {own};
  for (std::size_t p = 1; p < placement.size(); ++p) {
    std::size_t found = slots.size();
    for (std::size_t i = 0; i < slots.size() && found == slots.size(); ++i)
      if (slot_free_locked(i) && slots[i].device == placement[p] &&
          std::find(taken.begin(), taken.end(), i) == taken.end())
        found = i;
    if (found == slots.size()) return {};
    taken.push_back(found);
  }
  return taken;
}

std::vector<std::shared_ptr<TrialRecord>> Executor::Core::refresh_wait_reason_locked() {
  if (queue.empty() || can_start_locked()) return {};  // transient: a worker takes the head now
  std::string reason = busy_reason_locked(0);
  if (reason == current_wait_reason) return {};
  current_wait_reason = std::move(reason);
  std::vector<std::shared_ptr<TrialRecord>> records;
  for (const auto& entry : queue)
    records.insert(records.end(), entry.records.begin(), entry.records.end());
  return records;
}

void Executor::Core::notify_sinks_wait_reason(
    const std::vector<std::shared_ptr<TrialRecord>>& records, const std::string& reason) {
  for (const auto& record : records) record->update_wait_reason(reason);
}

void Executor::Core::on_record_completing(const TrialRecord& record, bool was_queued) {
  std::lock_guard lock(mutex);
  if (was_queued) leave_queue_locked(record);
  auto it = live_by_id.find(record.spec.id);
  if (it != live_by_id.end() && it->second.lock().get() == &record) live_by_id.erase(it);
  ++finished_count;
  ++completing_count;
}

void Executor::Core::leave_queue_locked(const TrialRecord& record) {
  // Each record leaves once; the guards only keep a slip from wrapping a count around.
  if (queued_count > 0) --queued_count;
  if (record.array && --record.array->still_queued > 0) return;  // its array still waits
  if (queued_entries > 0) --queued_entries;
}

void Executor::Core::on_record_completed() {
  {
    std::lock_guard lock(mutex);
    --completing_count;
  }
  idle_cv.notify_all();
}

// ---- Core: workers -----------------------------------------------------------------------------

void Executor::Core::worker_main(std::size_t slot_index) {
  const Slot& slot = slots[slot_index];
  const std::string slot_label = slot.label();
  std::unique_lock lock(mutex);
  std::vector<std::size_t> taken;
  auto can_take = [&] {
    taken.clear();
    if (!can_start_locked()) return false;
    taken = slots_for_head_locked(slot_index);
    return !taken.empty();
  };
  for (;;) {
    work_cv.wait(lock,
                 [&] { return can_take() || (stopping && queue.empty() && !held[slot_index]); });
    if (taken.empty()) return;  // stopping, nothing left
    detail::QueueEntry entry = std::move(queue.front());
    queue.pop_front();
    // Strict FIFO: a multi-GPU trial at the head waits for its GPUs and nothing passes it, so it
    // is never starved by a stream of one-GPU trials.
    std::vector<Device> devices;
    std::string label = slot_label;
    for (std::size_t i = 0; i < taken.size(); ++i) {
      devices.push_back(slots[taken[i]].device);
      if (i > 0) {
        label += '+';
        label += slots[taken[i]].label();
      }
    }
    // Every record still queued starts here (a fused array's members all on this one slot); one
    // cancelled while queued is left out, and an entry with none left takes no slot.
    std::vector<std::shared_ptr<TrialRecord>> claimed;
    for (auto& record : entry.records)
      if (record->claim(devices, label)) {
        leave_queue_locked(*record);
        claimed.push_back(std::move(record));
      }
    if (claimed.empty()) continue;
    running_count += claimed.size();
    ++running_entries;
    running_by_slot[slot_index] = claimed;
    for (std::size_t i = 1; i < taken.size(); ++i) held[taken[i]] = true;
    const std::vector<std::size_t> lent(taken.begin() + 1, taken.end());
    auto to_notify = refresh_wait_reason_locked();
    const std::string reason = current_wait_reason;
    lock.unlock();

    notify_sinks_wait_reason(to_notify, reason);
    if (entry.array_fn)
      run_array(std::move(entry.array_fn), claimed);
    else
      run_trial(claimed.front());
    entry = {};
    claimed.clear();

    lock.lock();
    --running_entries;
    running_by_slot[slot_index].clear();
    for (std::size_t i : lent) held[i] = false;
    // Slots freed: a multi-GPU trial waiting at the head may now start on another worker.
    work_cv.notify_all();
    idle_cv.notify_all();
  }
}

void Executor::Core::run_trial(const std::shared_ptr<TrialRecord>& record) {
  TrialContext context(*record);
  if (record->spec.timeout_s > 0)
    add_deadline({Clock::now() + to_clock(record->spec.timeout_s), record, false});

  TrialOutcome outcome;
  std::exception_ptr error;
  try {
    {
      std::lock_guard events(record->events_mutex);
      if (!record->events_closed)
        for (const auto& sink : sinks) sink->on_started(record->spec, record->devices);
    }
    outcome = record->with_requested_stop(record->fn(context));
  } catch (...) {
    error = std::current_exception();
    outcome = failure_outcome(error);  // whatever stop was requested
  }
  record->fn = nullptr;  // free what it captured before this slot takes the next trial
  record->end_run(std::move(outcome), error);
}

namespace {

// What an ArrayFn's `finish` shares with the worker running it. The ArrayFn may call finish from
// threads of its own, and may keep a copy of it: past its return, a call must fail cleanly.
struct ArrayResults {
  std::mutex mutex;
  std::vector<bool> finished;  // by finish()
  bool returned = false;
};

}  // namespace

void Executor::Core::run_array(ArrayFn fn,
                               const std::vector<std::shared_ptr<TrialRecord>>& members) {
  std::deque<TrialContext> contexts;  // a deque: TrialContext can be neither copied nor moved
  std::vector<TrialContext*> member_contexts;
  for (const auto& record : members) {
    contexts.emplace_back(*record);
    member_contexts.push_back(&contexts.back());
    if (record->spec.timeout_s > 0)  // each member's own deadline, as for one trial
      add_deadline({Clock::now() + to_clock(record->spec.timeout_s), record, false});
  }
  auto results = std::make_shared<ArrayResults>();
  results->finished.assign(members.size(), false);
  // Holds the records (not this frame), so a copy of it outliving the call still fails cleanly.
  const ArrayFinish finish = [results, members](std::size_t member, TrialOutcome outcome) {
    {
      std::lock_guard lock(results->mutex);
      if (results->returned)
        throw Error("fused array: finish(" + std::to_string(member) +
                    ") called after the array's function returned");
      if (member >= members.size())
        throw Error("fused array: finish(" + std::to_string(member) +
                    ") is out of range: it runs " + std::to_string(members.size()) + " members");
      if (results->finished[member])
        throw Error("fused array: finish(" + std::to_string(member) + ") called twice (trial " +
                    std::to_string(members[member]->spec.id) + ")");
      results->finished[member] = true;
    }
    TrialRecord& record = *members[member];
    record.end_run(record.with_requested_stop(std::move(outcome)), nullptr);
  };

  std::exception_ptr error;
  try {
    // One run: a sink failing here fails every member, as if the ArrayFn had thrown.
    for (const auto& record : members) {
      std::lock_guard events(record->events_mutex);
      if (!record->events_closed)
        for (const auto& sink : sinks) sink->on_started(record->spec, record->devices);
    }
    fn(member_contexts, finish);
  } catch (...) {
    error = std::current_exception();
  }
  fn = nullptr;  // free what it captured before this slot takes the next trial

  std::vector<std::size_t> unfinished;
  {
    std::lock_guard lock(results->mutex);
    results->returned = true;
    for (std::size_t i = 0; i < members.size(); ++i)
      if (!results->finished[i]) unfinished.push_back(i);
  }
  const TrialOutcome ended =
      error ? failure_outcome(error)  // whatever stop was requested, as for one trial
            : TrialOutcome{TrialState::failed,
                           "the fused array ended without a result for this trial",
                           sweep::Json::object()};
  // One future rethrows the exception (as get() does for a TrialFn's): the first unfinished one
  // still to complete, so it is not lost on a member the watchdog already completed.
  std::exception_ptr to_rethrow = error;
  for (std::size_t i : unfinished)
    if (members[i]->end_run(ended, to_rethrow)) to_rethrow = nullptr;
}

// ---- Core: timeouts ----------------------------------------------------------------------------

void Executor::Core::add_deadline(Deadline deadline) {
  {
    std::lock_guard lock(watchdog_mutex);
    deadlines.push(std::move(deadline));
  }
  watchdog_cv.notify_one();
}

void Executor::Core::watchdog_main() {
  std::unique_lock lock(watchdog_mutex);
  for (;;) {
    if (watchdog_stop) return;
    if (deadlines.empty()) {
      watchdog_cv.wait(lock);
      continue;
    }
    if (const Clock::time_point when = deadlines.top().when; Clock::now() < when) {
      watchdog_cv.wait_until(lock, when);
      continue;
    }
    Deadline due = deadlines.top();
    deadlines.pop();
    lock.unlock();
    if (auto record = due.record.lock()) {
      const std::string limit = shortest(record->spec.timeout_s);
      if (!due.force) {
        bool running;
        {
          std::lock_guard record_lock(record->mutex);
          running = record->phase == Phase::running;
        }
        if (running) {
          record->request_stop(StopKind::timeout, "timed out after " + limit + " s");
          add_deadline({Clock::now() + to_clock(options.timeout_grace_s), record, true});
        }
      } else if (record->begin_finish()) {
        std::string slot_label;
        {
          std::lock_guard record_lock(record->mutex);
          slot_label = record->slot_label;
        }
        record->complete(
            {TrialState::failed,
             "timed out after " + limit + " s; it did not return within " +
                 shortest(options.timeout_grace_s) + " s of being told to stop, so slot " +
                 slot_label + " stays busy until it does",
             sweep::Json::object()},
            nullptr);
      }
    }
    lock.lock();
  }
}

// ---- Executor ----------------------------------------------------------------------------------

Executor::Executor(ExecutorOptions options, std::vector<std::shared_ptr<EventSink>> sinks,
                   std::shared_ptr<StoppingPolicy> stopping_policy)
    : core_(std::make_shared<Core>()) {
  if (options.devices.empty()) throw Error("executor: no devices given (need at least one)");
  if (options.cpu_slots < 1)
    throw Error("executor: cpu_slots must be at least 1, not " + std::to_string(options.cpu_slots));
  if (options.trials_per_gpu < 1)
    throw Error("executor: trials_per_gpu must be at least 1, not " +
                std::to_string(options.trials_per_gpu));
  if (options.max_concurrent < 0)
    throw Error("executor: max_concurrent must be 0 (no limit) or positive, not " +
                std::to_string(options.max_concurrent));
  if (!(options.timeout_grace_s >= 0)) throw Error("executor: timeout_grace_s must be >= 0");
  for (std::size_t i = 0; i < options.devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (options.devices[i] == options.devices[j])
        throw Error("executor: device " + options.devices[i].label() + " is listed twice");
  for (auto& sink : sinks)
    if (!sink) throw Error("executor: an event sink is null");

  Core& core = *core_;
  // A GPU's slots share its device; each CPU slot is a device of its own, numbered per rank
  // (cpu:0, cpu:1, ...), so the store and the tables say which slot a trial ran in, as for GPUs.
  std::map<int, int> cpu_slots_by_rank;
  for (const Device& device : options.devices) {
    if (device.kind == DeviceKind::cpu) {
      for (int i = 0; i < options.cpu_slots; ++i)
        core.slots.push_back(
            Slot{Device{DeviceKind::cpu, cpu_slots_by_rank[device.rank]++, device.rank}, 0});
    } else {
      for (int i = 0; i < options.trials_per_gpu; ++i) core.slots.push_back(Slot{device, i});
    }
  }
  core.concurrency_limit =
      options.max_concurrent == 0
          ? core.slots.size()
          : std::min(core.slots.size(), static_cast<std::size_t>(options.max_concurrent));
  core.options = std::move(options);
  core.sinks = std::move(sinks);
  core.stopping_policy = std::move(stopping_policy);
  core.running_by_slot.resize(core.slots.size());
  core.held.assign(core.slots.size(), false);

  try {
    core.watchdog = std::thread([&core] { core.watchdog_main(); });
    for (std::size_t i = 0; i < core.slots.size(); ++i)
      core.workers.emplace_back([&core, i] { core.worker_main(i); });
  } catch (...) {
    shutdown();
    throw;
  }
}

Executor::~Executor() {
  try {
    shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sweep: executor shutdown failed: %s\n", e.what());
  }
}

// ---- Executor: stopping ------------------------------------------------------------------------

bool Executor::stop(std::int64_t trial_id, StopKind kind, const std::string& reason) {
  if (kind == StopKind::none) return false;
  if (kind == StopKind::cancel) return cancel(trial_id);
  std::shared_ptr<TrialRecord> record;
  {
    std::lock_guard lock(core_->mutex);
    auto it = core_->live_by_id.find(trial_id);
    if (it == core_->live_by_id.end()) return false;
    record = it->second.lock();
  }
  return record && record->request_stop(kind, reason);
}

bool Executor::cancel(std::int64_t trial_id) {
  std::shared_ptr<TrialRecord> record;
  {
    std::lock_guard lock(core_->mutex);
    auto it = core_->live_by_id.find(trial_id);
    if (it == core_->live_by_id.end()) return false;
    record = it->second.lock();
  }
  return record && TrialFuture(record).cancel();
}

void Executor::interrupt(const std::string& reason) {
  Core& core = *core_;
  std::vector<std::shared_ptr<TrialRecord>> queued, running;
  {
    std::lock_guard lock(core.mutex);
    core.interrupted = true;
    core.interrupt_reason = reason;
    for (const auto& entry : core.queue)
      queued.insert(queued.end(), entry.records.begin(), entry.records.end());
    core.queue.clear();
    for (const auto& records : core.running_by_slot)
      running.insert(running.end(), records.begin(), records.end());
  }
  for (const auto& record : running) record->request_stop(StopKind::interrupt, reason);
  detail::end_not_started(queued, reason);
  core.work_cv.notify_all();
  core.idle_cv.notify_all();
}

bool Executor::interrupted() const {
  std::lock_guard lock(core_->mutex);
  return core_->interrupted;
}

void Executor::wait_idle() {
  std::unique_lock lock(core_->mutex);
  core_->idle_cv.wait(lock, [&] {
    // running_entries too: a slot stays held until its function returns, also after its trials
    // completed (a fused array that finished every member, a TrialFn past its timeout).
    return core_->queued_count == 0 && core_->running_count == 0 && core_->running_entries == 0 &&
           core_->completing_count == 0;
  });
}

void Executor::shutdown() {
  Core& core = *core_;
  for (const auto& worker : core.workers)
    if (worker.get_id() == std::this_thread::get_id())
      throw Error("executor: shutdown() called from inside a trial would wait for itself");
  std::lock_guard once(core.shutdown_mutex);  // two threads must not join the same threads
  {
    std::lock_guard lock(core.mutex);
    core.accepting = false;
    core.stopping = true;
  }
  core.work_cv.notify_all();
  for (auto& worker : core.workers)
    if (worker.joinable()) worker.join();
  {
    std::lock_guard lock(core.watchdog_mutex);
    core.watchdog_stop = true;
  }
  core.watchdog_cv.notify_all();
  if (core.watchdog.joinable()) core.watchdog.join();
}

ExecutorStats Executor::stats() const {
  std::lock_guard lock(core_->mutex);
  return {core_->queued_count, core_->running_count, core_->finished_count, core_->slots.size()};
}

const std::vector<Slot>& Executor::slots() const { return core_->slots; }

}  // namespace sweep::scheduler
