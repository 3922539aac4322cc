/*
 * trial_run.h — one trial's training loop as an object that is stepped: what train() runs for a
 * trial alone, and what train_array() (trainer/array/train_array.h) runs for each member of a
 * fused array.
 *
 * A step is split in two so that an array can launch every member's device work before any member
 * reads anything back: launch_step() (the epoch's order when an epoch begins, the interrupt check,
 * the step's device work, asynchronous on a GPU) and complete_step() (reports, validation, early
 * stopping, checkpoints; it waits for the device only at report points). A member of an array
 * makes exactly the calls it makes alone, in the same order, on its own backend: its numbers are
 * its lone run's, bit for bit.
 *
 * A fused array goes one step further: complete_step_launching_validation() launches a
 * validation that falls due and returns, and complete_validation() waits for it and does the rest,
 * so every member's validation is on the device before any member waits for its own.
 *
 *   TrialRun run(config, data, callback, control);
 *   run.start();
 *   std::optional<RunState> ended;
 *   while (!ended && !run.epochs_done()) {
 *     ended = run.launch_step();
 *     if (!ended) ended = run.complete_step();
 *   }
 *   TrainResult result = run.finish(ended.value_or(RunState::completed));
 */
#pragma once

#include <memory>
#include <optional>

#include "trainer/data/load_data.h"
#include "trainer/train.h"

namespace sweep::trainer {

// Throws sweep::Error for impossible training options (batch size, epochs, log_every < 1, ...).
void check_training_spec(const TrainingSpec& t);

class TrialRun {
 public:
  // Builds the network, the optimizer and the device copies of `data` (which must be what
  // load_data(cfg.data, cfg.training.seed) gives; an array shares one copy among its members).
  // Throws sweep::Error for bad input, sweep::OutOfMemory when the device is full.
  TrialRun(const TrainConfig& cfg, std::shared_ptr<const LoadedData> data, TrainCallback& cb,
           const RunControl& control);
  ~TrialRun();
  TrialRun(const TrialRun&) = delete;
  TrialRun& operator=(const TrialRun&) = delete;

  void start();                           // restores the checkpoint when resuming; starts the clock
  bool epochs_done() const;               // every epoch trained: the run ends `completed`
  std::optional<RunState> launch_step();  // a state: the run ends before this step
  // launch_step() without the interrupt check (an interrupt is seen at the next step), so that it
  // runs on any thread: interrupting saves a checkpoint and calls control.checkpoint_written. For
  // a run whose epochs are not done (a fused array's members, side by side).
  void launch_step_unchecked();
  // Whether the next launch_step() of a run whose steps replay a recorded graph (a GPU's) costs
  // the host more than a replay: an epoch's first step (its order drawn and uploaded), a smaller
  // last batch (eager), a step before the graph is recorded. A fused array launches these side
  // by side. Always false on a backend without graphs.
  bool next_step_is_costly() const;
  std::optional<RunState> complete_step();  // a state: the run ends after this step
  // complete_step() in two halves: the first launches a validation that falls due and returns;
  // the second (a no-op when nothing is owed) reads it, reports it, and does what follows it.
  std::optional<RunState> complete_step_launching_validation();
  std::optional<RunState> complete_validation();
  // After complete_step_launching_validation(): a validation is launched and not yet read (until
  // complete_validation()); the next step must wait for it.
  bool owes_validation() const;
  TrainResult finish(RunState state);  // the final evaluation; call once

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep::trainer
