/*
 * executor.cpp — worker threads (one per slot), the FIFO queue, the timeout watchdog.
 *
 * A worker that finishes a trial takes the next one in the same critical section in which it
 * released its slot, so the "all slots busy" situation never flickers and queued trials are not
 * re-told their wait reason after every finish. The watchdog is one thread for all trials: a heap
 * of deadlines, first the stop request, then (after timeout_grace_s) the forced completion.
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

// ---- Core: wait reasons ------------------------------------------------------------------------

std::string Executor::Core::busy_reason_locked(std::size_t queued_ahead) const {
  if (interrupted) return "executor interrupted";
  if (!queue.empty() && queue.front()->spec.gpus > 1 && running_count < concurrency_limit)
    return "needs " + std::to_string(queue.front()->spec.gpus) + " GPUs, " +
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
  if (interrupted || queue.empty() || running_count >= concurrency_limit) return false;
  const int gpus = queue.front()->spec.gpus;
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
  if (held[own] || running_by_slot[own]) return {};
  const TrialSpec& head = queue.front()->spec;
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
  return {queue.begin(), queue.end()};
}

void Executor::Core::notify_sinks_wait_reason(
    const std::vector<std::shared_ptr<TrialRecord>>& records, const std::string& reason) {
  for (const auto& record : records) record->update_wait_reason(reason);
}

void Executor::Core::on_record_completing(const TrialRecord& record, bool was_queued) {
  std::lock_guard lock(mutex);
  if (was_queued && queued_count > 0) --queued_count;
  auto it = live_by_id.find(record.spec.id);
  if (it != live_by_id.end() && it->second.lock().get() == &record) live_by_id.erase(it);
  ++finished_count;
  ++completing_count;
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
    std::shared_ptr<TrialRecord> record = std::move(queue.front());
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
    if (!record->claim(devices, label)) continue;  // cancelled while queued
    --queued_count;
    ++running_count;
    running_by_slot[slot_index] = record;
    for (std::size_t i = 1; i < taken.size(); ++i) held[taken[i]] = true;
    const std::vector<std::size_t> lent(taken.begin() + 1, taken.end());
    auto to_notify = refresh_wait_reason_locked();
    const std::string reason = current_wait_reason;
    lock.unlock();

    notify_sinks_wait_reason(to_notify, reason);
    run_trial(record, slot);
    record.reset();

    lock.lock();
    --running_count;
    running_by_slot[slot_index].reset();
    for (std::size_t i : lent) held[i] = false;
    // Slots freed: a multi-GPU trial waiting at the head may now start on another worker.
    work_cv.notify_all();
    idle_cv.notify_all();
  }
}

void Executor::Core::run_trial(const std::shared_ptr<TrialRecord>& record, const Slot& slot) {
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
    outcome = record->fn(context);
  } catch (const std::bad_alloc&) {
    error = std::current_exception();
    outcome = {TrialState::failed, "out of memory", sweep::Json::object()};
  } catch (const std::exception& e) {
    error = std::current_exception();
    outcome = {TrialState::failed, e.what(), sweep::Json::object()};
  } catch (...) {
    error = std::current_exception();
    outcome = {TrialState::failed, "unknown exception (not derived from std::exception)",
               sweep::Json::object()};
  }
  record->fn = nullptr;  // free what it captured before this slot takes the next trial

  const StopKind stop = record->stop_kind.load();
  if (!error && stop != StopKind::none && outcome.state != TrialState::diverged) {
    std::string reason;
    {
      std::lock_guard lock(record->mutex);
      reason = record->stop_reason;
    }
    switch (stop) {
      case StopKind::early_stop:
        outcome.state = TrialState::stopped_early;
        break;
      case StopKind::cancel:
        outcome.state = TrialState::cancelled;
        break;
      case StopKind::interrupt:
        outcome.state = TrialState::interrupted;
        break;
      case StopKind::timeout:
        outcome.state = TrialState::failed;
        break;
      case StopKind::none:
        break;
    }
    outcome.message = reason;
  }
  if (record->begin_finish()) record->complete(std::move(outcome), error);
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

TrialFuture Executor::submit(TrialSpec spec, TrialFn fn, TrialCallbacks callbacks) {
  if (!fn) throw Error("submit: the TrialFn is empty");
  Core& core = *core_;
  std::shared_ptr<TrialRecord> record;
  {
    std::lock_guard lock(core.mutex);
    if (!core.accepting) throw Error("submit: the executor has been shut down");
    if (spec.id < 0) {
      while (core.live_by_id.contains(core.next_auto_id)) ++core.next_auto_id;
      spec.id = core.next_auto_id++;
    } else if (auto it = core.live_by_id.find(spec.id);
               it != core.live_by_id.end() && !it->second.expired()) {
      throw Error("submit: trial id " + std::to_string(spec.id) + " is already queued or running");
    }
    if (spec.gpus < 1)
      throw Error("submit: a trial needs at least 1 GPU, not " + std::to_string(spec.gpus));
    if (spec.gpus > 1) {
      // The most GPUs one process (rank) has: a multi-GPU trial never spans processes.
      std::map<int, std::set<int>> gpus_by_rank;
      for (const Device& d : core.options.devices)
        if (d.kind == DeviceKind::cuda) gpus_by_rank[d.rank].insert(d.index);
      std::size_t most = 0;
      for (const auto& [rank, gpus] : gpus_by_rank) most = std::max(most, gpus.size());
      if (std::size_t(spec.gpus) > most)
        throw Error("submit: trial " + std::to_string(spec.number) + " needs " +
                    std::to_string(spec.gpus) + " GPUs, but the executor has " +
                    std::to_string(most) + (gpus_by_rank.size() > 1 ? " on any one rank" : ""));
    }
    for (const Device& d : spec.placement)
      if (std::none_of(core.slots.begin(), core.slots.end(),
                       [&](const Slot& slot) { return slot.device == d; }))
        throw Error("submit: trial " + std::to_string(spec.number) + " is placed on " + d.label() +
                    ", which the executor does not have");
    record =
        std::make_shared<TrialRecord>(std::move(spec), std::move(fn), std::move(callbacks), core_);
    const std::size_t free_slots =
        std::min(core.free_slots_locked(),
                 core.concurrency_limit - std::min(core.concurrency_limit, core.running_count));
    record->wait_reason = core.interrupted || core.queued_count >= free_slots
                              ? core.busy_reason_locked(core.queued_count)
                              : std::string();
    core.live_by_id[record->spec.id] = record;
    ++core.queued_count;
  }

  // on_queued before the record is in the queue, so on_started can never precede it; the events
  // lock makes a concurrent cancel(id) wait until on_queued was sent.
  bool interrupted_meanwhile = false;
  std::vector<std::shared_ptr<TrialRecord>> to_notify;
  std::string reason;
  {
    std::lock_guard events(record->events_mutex);
    try {
      for (const auto& sink : core.sinks) sink->on_queued(record->spec, record->wait_reason);
    } catch (...) {
      {
        std::lock_guard lock(core.mutex);
        --core.queued_count;
        core.live_by_id.erase(record->spec.id);
      }
      core.idle_cv.notify_all();
      throw;
    }
    {
      std::lock_guard lock(core.mutex);
      if (core.interrupted) {
        interrupted_meanwhile = true;
      } else {
        core.queue.push_back(record);
        to_notify = core.refresh_wait_reason_locked();
        reason = core.current_wait_reason;
      }
    }
  }
  // All workers: one whose slot is lent to a multi-GPU trial cannot take it, another can.
  core.work_cv.notify_all();
  // Outside this trial's events lock: holding one trial's lock while taking others' could
  // deadlock against a concurrent submit doing the same the other way round.
  core.notify_sinks_wait_reason(to_notify, reason);
  if (interrupted_meanwhile && record->begin_finish()) {
    std::string why;
    {
      std::lock_guard lock(core.mutex);
      why = core.interrupt_reason;
    }
    record->complete({TrialState::interrupted, "not started: executor interrupted (" + why + ")",
                      sweep::Json::object()},
                     nullptr);
  }
  return TrialFuture(record);
}

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
    queued.assign(core.queue.begin(), core.queue.end());
    core.queue.clear();
    for (const auto& record : core.running_by_slot)
      if (record) running.push_back(record);
  }
  for (const auto& record : running) record->request_stop(StopKind::interrupt, reason);
  for (const auto& record : queued)
    if (record->begin_finish())
      record->complete(
          {TrialState::interrupted, "not started: executor interrupted (" + reason + ")",
           sweep::Json::object()},
          nullptr);
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
    return core_->queued_count == 0 && core_->running_count == 0 && core_->completing_count == 0;
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
