/*
 * executor.h — runs trials on device slots: one worker thread per slot, a FIFO queue in front.
 *
 * The one non-obvious decision: a slot is held by its worker thread for as long as the TrialFn
 * runs, even past a timeout. Threads cannot be killed, and a TrialFn that ignores its stop token
 * may still be using the GPU's memory, so its slot stays busy until it returns (the future still
 * completes as `failed` after the grace period, so nobody waiting on it hangs). Shutdown joins
 * every worker — never a detached thread — so a TrialFn that never returns blocks shutdown too.
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
  int max_concurrent = 0;  // cap on running trials over all slots; 0 = as many as slots
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

struct ExecutorStats {
  std::size_t queued = 0;    // submitted, not started, not cancelled
  std::size_t running = 0;   // TrialFns executing (including timed-out ones still holding a slot)
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
