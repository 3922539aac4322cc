/*
 * executor.h — runs trials on device slots: one worker thread per slot, a FIFO queue in front.
 *
 * The one non-obvious decision: a slot is held by its worker thread for as long as the TrialFn
 * runs, even past a timeout. Threads cannot be killed, and a TrialFn that ignores its stop token
 * may still be using the GPU's memory, so its slot stays busy until it returns (the future still
 * completes as `failed` after the grace period, so nobody waiting on it hangs). Shutdown joins
 * every worker — never a detached thread — so a TrialFn that never returns blocks shutdown too.
 * A fused array (submit_array) is one entry of the queue and holds one slot the same way: its
 * ArrayFn runs every member on that slot's worker, and each member still ends as a trial of its
 * own.
 *
 * Thread safety: every public method may be called from any thread, including from inside a
 * TrialFn or an EventSink (e.g. cancel()).
 *
 *   ExecutorOptions options;
 *   options.devices = {Device::cpu()};
 *   options.cpu_slots = 2;
 *   Executor executor(options, {store_sink},
 *                     make_stopping_policy(early_terminate, "val_accuracy", goal));
 *   std::vector<TrialFuture> futures;
 *   for (auto& spec : specs) futures.push_back(executor.submit(spec, trial_fn));
 *   while (auto index = fetch_next(futures)) show(futures[*index].outcome());
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/device.h"
#include "scheduler/event_sink.h"
#include "scheduler/trial.h"
#include "scheduler/trial_future.h"

namespace sweep::scheduler {

class StoppingPolicy;

struct ExecutorOptions {
  std::vector<Device> devices = {Device::cpu()};  // empty is an error
  // Slots per CPU device: trials run side by side, each using oneTBB. Each slot is a Device of
  // its own, numbered per rank (cpu:0, cpu:1, ...), so a trial's device says which slot it had.
  int cpu_slots = 1;
  int trials_per_gpu = 1;  // slots per CUDA device
  // Cap on slots in use at once over all slots (a running trial, or a running fused array of any
  // number of members, counts once); 0 = as many as slots.
  int max_concurrent = 0;
  // After a timeout sets a trial's stop token, how long the TrialFn gets to return before its
  // future completes as failed anyway (its slot stays busy until it does return).
  double timeout_grace_s = 30;
};

// One place a trial can run: a device and which of its slots.
struct Slot {
  Device device;
  int slot_index = 0;         // 0 .. trials_per_gpu - 1 on a GPU; 0 on a CPU slot (its own device)
  std::string label() const;  // "cuda:0#1", "cpu:1#0"
};

// Counts of trials: a fused array's members count one by one.
struct ExecutorStats {
  std::size_t queued = 0;  // submitted, not started, not cancelled
  // Trials whose function has not yet ended them: a TrialFn executing (including a timed-out one
  // still holding its slot); a fused array's member until finish() ends it or the ArrayFn returns.
  std::size_t running = 0;
  std::size_t finished = 0;  // reached a final state
  std::size_t slots = 0;
};

class Executor {
 public:
  // Throws sweep::Error for impossible options (no devices, slots < 1, max_concurrent < 0).
  explicit Executor(ExecutorOptions options = {},
                    std::vector<std::shared_ptr<EventSink>> sinks = {},
                    std::shared_ptr<StoppingPolicy> stopping_policy = nullptr);
  // shutdown(): runs what is queued, waits for everything. Call interrupt() first to end quickly.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Returns at once. The trial waits in FIFO order until a slot is free; exactly one worker runs
  // it. After interrupt() the trial completes at once as `interrupted` without running; after
  // shutdown() submit throws sweep::Error. A spec id that is already live throws sweep::Error.
  TrialFuture submit(TrialSpec spec, TrialFn fn, TrialCallbacks callbacks = {});

  // A fused array: K trials of one shape trained together by ONE ArrayFn on ONE slot (one worker
  // thread), each member still a full trial (its own id, future, sink events, callbacks, stopping
  // decisions, stop / cancel / timeout and final state). Futures in spec order; ids, on_queued
  // and refusals as for K submit() calls. `callbacks` is empty or one per spec. Every member needs
  // gpus == 1 and the same placement (all empty, or all equal): they share one slot.
  // The array is ONE entry of the FIFO queue and takes ONE slot. When a worker takes it, the
  // members still queued start there (on_started each; a member cancelled while queued is left
  // out, and if none is left fn is not called); fn gets their contexts in spec order. A member
  // that fn returns without finishing fails ("the fused array ended without a result for this
  // trial"); when fn throws, every unfinished member fails with its message, and the first of them
  // rethrows it from TrialFuture::get(). The slot is held until fn returns. Stops are per member;
  // interrupt() ends a queued array's members `interrupted` without running it.
  // Throws sweep::Error for no specs, an empty fn, a callbacks size other than 0 or specs.size(),
  // a member with gpus != 1, differing placements, or an id that is live.
  std::vector<TrialFuture> submit_array(std::vector<TrialSpec> specs, ArrayFn fn,
                                        std::vector<TrialCallbacks> callbacks = {});

  // Same as TrialFuture::cancel for the live trial with this id; false if none / already final.
  bool cancel(std::int64_t trial_id);
  // Asks the live trial with this id to stop as `kind` (cancel = cancel()), first stop wins; false
  // if none / already stopping or final. A remote rank relays its coordinator's stops with it.
  bool stop(std::int64_t trial_id, StopKind kind, const std::string& reason);

  // Ctrl-C: stop launching; running trials get StopKind::interrupt (they checkpoint and return,
  // ending `interrupted`); queued ones complete at once as `interrupted` without running.
  // Later submits complete as interrupted too. Does not wait: call wait_idle() or shutdown().
  void interrupt(const std::string& reason = "interrupted");
  bool interrupted() const;

  // Blocks until nothing is queued or running. The executor stays usable.
  void wait_idle();
  // Stops accepting trials, runs what is queued, joins every thread. Idempotent.
  void shutdown();

  ExecutorStats stats() const;
  const std::vector<Slot>& slots() const;

  struct Core;  // shared with the trial records (implementation detail)

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace sweep::scheduler
