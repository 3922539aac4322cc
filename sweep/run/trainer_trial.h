/*
 * trainer_trial.h — the built-in trainer as a scheduler TrialFn.
 *
 * The trial's input is captured in the TrialFn's closure (make_trainer_trial(input)), as the
 * external command's is, so nothing crosses the scheduler but the closure. Its TrainConfig is
 * resolved when the trial starts (a sweep of 100,000 trials reads each config only when it
 * runs). The TrialFn streams the trainer's callbacks into
 * TrialContext::report, maps a stop request onto the trainer's two ways of ending early — an
 * interrupt (Ctrl-C) goes through RunControl::interrupt so the trainer writes a checkpoint, any
 * other stop (ASHA, cancel, timeout) makes the callback return false — and turns the TrainResult
 * into a TrialOutcome with a JSON summary.
 */
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include "common/json.h"
#include "scheduler/trial.h"
#include "trainer/train.h"

namespace sweep::run {

struct TrainerTrialInput {
  // The trial's config, resolved when the trial starts; may throw (a bad combination of swept
  // values: the trial fails with the message). The device is filled in from the slot it gets.
  std::function<trainer::TrainConfig()> config;
  std::string trial_dir;  // checkpoint.bin is written here
  int cpu_threads = 0;    // oneTBB threads for a CPU trial (0 = share all)
  bool resume = false;    // continue from trial_dir/checkpoint.bin when it exists
  // Whose trial it is: with the resolved config, the identity its checkpoints carry and the one it
  // requires of the checkpoint it resumes from (trial_identity.h).
  std::string sweep_name;
  std::int64_t trial_number = -1;
  // The trial failed before and is retried (`sweep resume --retry-failed`): a checkpoint it cannot
  // use (unreadable, another trial's) is set aside, kept, and the trial trains from the start,
  // instead of failing again for the same reason every time.
  bool retried = false;
  // Lines for the sweep's console besides the trial's log (a checkpoint set aside); may be empty.
  std::function<void(const std::string& line)> notice;
  // After each checkpoint is written (trainer::RunControl::checkpoint_written); may be empty.
  std::function<void(const std::string& path)> checkpoint_written;
};

std::string checkpoint_path(const std::string& trial_dir);

scheduler::TrialFn make_trainer_trial(TrainerTrialInput input);

// The pieces of a trainer trial, shared with the fused arrays (trainer_array.h): the resolved
// config placed on the context's slot(s), the run control (checkpoint, its identity, resume,
// interrupt flag), the log line of the end.
trainer::TrainConfig place_trial(const TrainerTrialInput& in, scheduler::TrialContext& context);
trainer::RunControl trial_control(const TrainerTrialInput& in, const trainer::TrainConfig& config,
                                  scheduler::TrialContext& context);
void log_end(scheduler::TrialContext& context, const trainer::TrainResult& result);
// A trial's failure as its outcome says it: a checkpoint that cannot be used gets the way out
// (--retry-failed sets it aside and trains the trial from the start).
std::exception_ptr with_checkpoint_hint(const std::exception_ptr& error);

// The trial's final outcome for a TrainResult (exposed for tests).
scheduler::TrialOutcome outcome_of(const trainer::TrainResult& result,
                                   const trainer::TrainConfig& config);
sweep::Json summary_of(const trainer::TrainResult& result);

}  // namespace sweep::run
