/*
 * trial.h — what a trial is to the executor: a spec in, a TrialFn run on a device, an outcome out.
 *
 * The TrialFn is the only code that knows what "training" means (the built-in trainer, an external
 * command, a test lambda). It talks back through TrialContext: metrics, log lines, progress, and a
 * stop token it must poll. Stopping is cooperative — the executor never kills a thread — so the
 * TrialFn decides how to end (checkpoint on interrupt, return at once on early stop); the executor
 * then maps the stop onto the final state (see TrialOutcome below).
 *
 *   sweep::scheduler::TrialFn fn = [](TrialContext& ctx) {
 *     for (int epoch = 1; epoch <= 10 && !ctx.should_stop(); ++epoch) {
 *       ctx.report({"val_accuracy", train_one_epoch(ctx.device()), epoch, epoch});
 *       ctx.set_progress(epoch / 10.0, "epoch " + std::to_string(epoch) + "/10");
 *     }
 *     return TrialOutcome{TrialState::completed, "", {{"epochs", 10}}};
 *   };
 */
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/trial_state.h"
#include "common/words.h"
#include "scheduler/device.h"
#include "scheduler/metric_point.h"

namespace sweep::scheduler {

struct TrialSpec {
  std::int64_t id = -1;     // the store's id; < 0: the executor assigns a unique one at submit
  std::int64_t number = 0;  // 0-based position in the sweep, for people ("trial 7")
  std::string name;         // e.g. "lr=0.01,bs=64"
  sweep::Json params = sweep::Json::object();  // flat or nested; command templates read keys
  double timeout_s = 0;                        // wall-clock limit once running; 0 = none
  // GPUs the trial trains on at once (data parallel): it takes one slot on each of that many
  // distinct CUDA devices. 1 on a CPU executor too (a CPU trial takes one slot).
  int gpus = 1;
  // Where it must run: empty = any free slot (the usual); else exactly these devices, the first
  // being its slot. A remote rank places a trial where the coordinator's executor put it, so the
  // device stored for the trial is the one it really runs on.
  std::vector<Device> placement;
};

// How a trial ended. The executor fills `state` from the TrialFn's return value, then:
//  - stop requested (any StopKind) and the TrialFn returned: the stop wins over what it returned,
//    except `diverged` (a real result) — early_stop → stopped_early (message = the rule's reason),
//    cancel → cancelled, interrupt → interrupted, timeout → failed "timed out after N s";
//  - the TrialFn threw: failed, message = what() (std::bad_alloc → "out of memory"), whatever
//    stop was requested; TrialFuture::get() rethrows the exception itself.
struct TrialOutcome {
  TrialState state = TrialState::completed;
  std::string message;                          // why it ended, for people; "" if completed
  sweep::Json summary = sweep::Json::object();  // final metrics etc., kept verbatim
};

enum class StopKind {
  none,
  early_stop,  // a stopping policy (median / ASHA / hyperband); stop_reason() says which rule
  cancel,      // the user cancelled this trial
  interrupt,   // Ctrl-C / worker shutdown: save a checkpoint, then return (ends `interrupted`)
  timeout,     // TrialSpec::timeout_s elapsed (ends `failed`)
};
Words<StopKind> words_of(StopKind);
std::string_view to_string(StopKind kind);

namespace detail {
struct TrialRecord;
}

// Handed to the TrialFn by reference; valid only during the call. All methods may be called from
// any thread the TrialFn starts (they are thread-safe), but not after the TrialFn has returned.
class TrialContext {
 public:
  explicit TrialContext(detail::TrialRecord& record) : record_(record) {}
  TrialContext(const TrialContext&) = delete;
  TrialContext& operator=(const TrialContext&) = delete;

  const Device& device() const;                // the first (or only) device
  const std::vector<Device>& devices() const;  // every device of a multi-GPU trial, in order
  const TrialSpec& spec() const;

  // Forwards to every EventSink, this trial's callbacks, then the stopping policy (which may set
  // the stop token with StopKind::early_stop). Fills wall_time when it is 0. An exception thrown by
  // a sink propagates out of report() (e.g. the store's disk is full): the trial then fails with
  // it.
  void report(const MetricPoint& point);
  void report(std::string name, double value, std::int64_t step, std::int64_t epoch);

  // How many epochs this trial trains, when the TrialFn knows (the built-in trainer does; 0 =
  // unknown). Once it reported a point of its last epoch, no stopping rule stops it: a stop there
  // would stop nothing and only mark a finished run stopped_early, so it ends as it returns.
  void set_epochs(std::int64_t epochs);

  // Cheap (one atomic load): poll it every iteration.
  bool should_stop() const noexcept;
  StopKind stop_kind() const noexcept;
  std::string stop_reason() const;              // "" while no stop was requested
  std::stop_token stop_token() const noexcept;  // for std::stop_callback / condition_variable_any
  // Set on any stop / on interrupt only: for code that takes an atomic flag (trainer::RunControl).
  const std::atomic<bool>& stop_flag() const noexcept;
  const std::atomic<bool>& interrupt_flag() const noexcept;
  // Sleeps until a stop is requested or `duration` passes; returns should_stop().
  bool wait_for_stop(std::chrono::duration<double> duration) const;

  void log(std::string_view line);                            // one line of the trial's log
  void set_progress(double fraction, std::string text = {});  // 0..1, for live display

 private:
  detail::TrialRecord& record_;
};

using TrialFn = std::function<TrialOutcome(TrialContext&)>;

// How a trial that threw is recorded: failed, message = what() ("out of memory" for
// std::bad_alloc). The executor uses it for a TrialFn's exception; an ArrayFn that catches one
// member's exception passes it to that member's finish() the same way.
TrialOutcome failure_outcome(const std::exception_ptr& error);

// A fused array's function: runs every member given, on one slot, in one call. It calls
// finish(i, outcome) once per member i as that member ends (members may end at different times;
// each completes at once: its future, sinks and callbacks see it then, not when the array returns).
//
// finish() maps the outcome as for a TrialFn's return value (TrialOutcome above: a stop requested
// for that member wins, except over diverged); it may be called from any thread the ArrayFn
// starts, until the ArrayFn returns. It throws sweep::Error for an index out of range, a member
// finished twice, or a call after the ArrayFn returned. Each context stays valid until the ArrayFn
// returns, also after its member was finished (what it reports then is dropped).
using ArrayFinish = std::function<void(std::size_t member, TrialOutcome outcome)>;
using ArrayFn =
    std::function<void(const std::vector<TrialContext*>& members, const ArrayFinish& finish)>;

// Optional per-trial observers, called after the executor's EventSinks, on the same thread, with
// the same ordering guarantees (see event_sink.h). Empty functions are skipped.
struct TrialCallbacks {
  std::function<void(const MetricPoint&)> on_metric;
  std::function<void(std::string_view line)> on_log;
  std::function<void(const TrialOutcome&)> on_finished;
};

}  // namespace sweep::scheduler
