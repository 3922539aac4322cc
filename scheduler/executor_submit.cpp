/*
 * executor_submit.cpp — Executor::submit and submit_array: a spec checked and made a record, its
 * id assigned, the sinks told it is queued, then the queue entry (one trial or one fused array).
 */
#include <algorithm>
#include <map>
#include <set>

#include "common/check.h"
#include "common/format.h"
#include "scheduler/detail/executor_core.h"
#include "scheduler/detail/trial_record.h"
#include "scheduler/executor.h"

namespace sweep::scheduler {

using detail::TrialRecord;
// ---- Executor: submitting -----------------------------------------------------------------------

namespace {

// Checks one spec against the executor and makes its record: its id assigned (or refused while
// live) and registered, so a later spec of the same call sees it. With the core mutex held; the
// caller counts the records queued once every spec of its call was admitted.
std::shared_ptr<TrialRecord> admit_locked(const std::shared_ptr<Executor::Core>& core_ptr,
                                          TrialSpec spec, TrialFn fn, TrialCallbacks callbacks,
                                          const std::string& caller) {
  Executor::Core& core = *core_ptr;
  if (spec.id < 0) {
    while (core.live_by_id.contains(core.next_auto_id)) ++core.next_auto_id;
    spec.id = core.next_auto_id++;
  } else if (auto it = core.live_by_id.find(spec.id);
             it != core.live_by_id.end() && !it->second.expired()) {
    throw Error(caller + ": trial id " + std::to_string(spec.id) + " is already queued or running");
  }
  if (spec.gpus < 1)
    throw Error(caller + ": a trial needs at least 1 GPU, not " + std::to_string(spec.gpus));
  if (spec.gpus > 1) {
    // The most GPUs one process (rank) has: a multi-GPU trial never spans processes.
    std::map<int, std::set<int>> gpus_by_rank;
    for (const Device& d : core.options.devices)
      if (d.kind == DeviceKind::cuda) gpus_by_rank[d.rank].insert(d.index);
    std::size_t most = 0;
    for (const auto& [rank, gpus] : gpus_by_rank) most = std::max(most, gpus.size());
    if (std::size_t(spec.gpus) > most)
      throw Error(caller + ": trial " + std::to_string(spec.number) + " needs " +
                  std::to_string(spec.gpus) + " GPUs, but the executor has " +
                  std::to_string(most) + (gpus_by_rank.size() > 1 ? " on any one rank" : ""));
  }
  for (const Device& d : spec.placement)
    if (std::none_of(core.slots.begin(), core.slots.end(),
                     [&](const Slot& slot) { return slot.device == d; }))
      throw Error(caller + ": trial " + std::to_string(spec.number) + " is placed on " + d.label() +
                  ", which the executor does not have");
  auto record =
      std::make_shared<TrialRecord>(std::move(spec), std::move(fn), std::move(callbacks), core_ptr);
  core.live_by_id[record->spec.id] = record;
  return record;
}

// Counts admitted records queued as one entry (a trial, or a fused array's members), each told
// why it waits: "" when a slot is free for the entry now. With the core mutex held.
void count_queued_locked(Executor::Core& core,
                         const std::vector<std::shared_ptr<TrialRecord>>& records) {
  const std::size_t free_slots =
      std::min(core.free_slots_locked(),
               core.concurrency_limit - std::min(core.concurrency_limit, core.running_entries));
  const std::string reason = core.interrupted || core.queued_entries >= free_slots
                                 ? core.busy_reason_locked(core.queued_entries)
                                 : std::string();
  for (const auto& record : records) record->wait_reason = reason;
  core.queued_count += records.size();
  ++core.queued_entries;
}

// A sink threw from on_queued for records[sent], so the submit fails. Records already told they
// were queued end failed with its message (no sink keeps a trial queued forever); the rest are
// forgotten, as if never submitted.
void withdraw(Executor::Core& core, const std::vector<std::shared_ptr<TrialRecord>>& records,
              std::size_t sent, const std::exception_ptr& error) {
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!records[i]->begin_finish()) continue;  // a concurrent cancel(id) completes it
    if (i < sent) {
      records[i]->complete(failure_outcome(error), nullptr);
      continue;
    }
    std::lock_guard lock(core.mutex);
    core.leave_queue_locked(*records[i]);
    core.live_by_id.erase(records[i]->spec.id);
  }
  core.idle_cv.notify_all();
}

// Sends on_queued for each record in order, then puts the entry in the queue (or, when the
// executor was interrupted meanwhile, ends its records interrupted). No lock held.
void enqueue(Executor::Core& core, detail::QueueEntry entry) {
  // on_queued before the records are in the queue, so on_started can never precede it; a
  // record's events lock makes a concurrent cancel(id) wait until its on_queued was sent.
  std::size_t sent = 0;
  try {
    for (const auto& record : entry.records) {
      std::lock_guard events(record->events_mutex);
      for (const auto& sink : core.sinks) sink->on_queued(record->spec, record->wait_reason);
      ++sent;
    }
  } catch (...) {
    withdraw(core, entry.records, sent, std::current_exception());
    throw;
  }
  std::vector<std::shared_ptr<TrialRecord>> to_notify, not_started;
  std::string reason;
  {
    std::lock_guard lock(core.mutex);
    if (core.interrupted) {
      not_started = std::move(entry.records);
      reason = core.interrupt_reason;
    } else {
      core.queue.push_back(std::move(entry));
      to_notify = core.refresh_wait_reason_locked();
      reason = core.current_wait_reason;
    }
  }
  // All workers: one whose slot is lent to a multi-GPU trial cannot take it, another can.
  core.work_cv.notify_all();
  // Outside every trial's events lock: holding one trial's lock while taking others' could
  // deadlock against a concurrent submit doing the same the other way round.
  core.notify_sinks_wait_reason(to_notify, reason);
  detail::end_not_started(not_started, reason);
}

std::string placement_text(const std::vector<Device>& placement) {
  return placement.empty() ? "any slot" : devices_label(placement);
}

}  // namespace

TrialFuture Executor::submit(TrialSpec spec, TrialFn fn, TrialCallbacks callbacks) {
  if (!fn) throw Error("submit: the TrialFn is empty");
  std::shared_ptr<TrialRecord> record;
  {
    std::lock_guard lock(core_->mutex);
    if (!core_->accepting) throw Error("submit: the executor has been shut down");
    record = admit_locked(core_, std::move(spec), std::move(fn), std::move(callbacks), "submit");
    count_queued_locked(*core_, {record});
  }
  enqueue(*core_, {{record}, nullptr});
  return TrialFuture(record);
}

std::vector<TrialFuture> Executor::submit_array(std::vector<TrialSpec> specs, ArrayFn fn,
                                                std::vector<TrialCallbacks> callbacks) {
  if (specs.empty()) throw Error("submit_array: a fused array needs at least one trial, got none");
  if (!fn) throw Error("submit_array: the ArrayFn is empty");
  if (!callbacks.empty() && callbacks.size() != specs.size())
    throw Error("submit_array: " + std::to_string(callbacks.size()) + " callbacks for " +
                std::to_string(specs.size()) + " trials (give none, or one per trial)");
  // The members share one slot: one device each, the same one.
  for (const TrialSpec& spec : specs) {
    if (spec.gpus != 1)
      throw Error("submit_array: trial " + std::to_string(spec.number) + " asks for " +
                  std::to_string(spec.gpus) +
                  " GPUs, but a fused array's members share one slot (gpus = 1 each)");
    if (spec.placement != specs.front().placement)
      throw Error("submit_array: trial " + std::to_string(specs.front().number) + " is placed on " +
                  placement_text(specs.front().placement) + " and trial " +
                  std::to_string(spec.number) + " on " + placement_text(spec.placement) +
                  ", but a fused array's members share one slot (the same placement for all)");
  }
  detail::QueueEntry entry{{}, std::move(fn)};
  {
    std::lock_guard lock(core_->mutex);
    if (!core_->accepting) throw Error("submit_array: the executor has been shut down");
    try {
      for (std::size_t i = 0; i < specs.size(); ++i)
        entry.records.push_back(admit_locked(
            core_, std::move(specs[i]), nullptr,
            callbacks.empty() ? TrialCallbacks{} : std::move(callbacks[i]), "submit_array"));
    } catch (...) {
      for (const auto& record : entry.records) core_->live_by_id.erase(record->spec.id);
      throw;
    }
    auto membership = std::make_shared<detail::ArrayMembership>();
    membership->still_queued = entry.records.size();
    for (const auto& record : entry.records) record->array = membership;
    count_queued_locked(*core_, entry.records);
  }
  std::vector<TrialFuture> futures;
  for (const auto& record : entry.records) futures.emplace_back(record);
  enqueue(*core_, std::move(entry));
  return futures;
}

}  // namespace sweep::scheduler
