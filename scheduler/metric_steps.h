/*
 * metric_steps.h — where an external trainer's metric lines are kept: one step per line, never two
 * values of one metric at one step within one run of the trainer.
 *
 * The store keeps one value per (trial, metric, step), so two lines of one run that name the same
 * step would keep only the later value. Trainers do print such steps: a batch index that starts
 * again every epoch ({"epoch": 2, "step": 0, ...}), a step that stays 0, a counter reset by an
 * evaluation loop. The rule, for every line of one run:
 *  - the trainer's step is kept as it is while it never goes backward (a line may repeat the last
 *    step for other metrics: {"step": 40, "loss": ...} then {"step": 40, "val_accuracy": ...});
 *  - a line whose step goes backward, or repeats a metric already kept at that step, or repeats
 *    the step at a larger "epoch" than the line before (a step counted within an epoch), is placed
 *    right after the run's last step, and so are the lines after it (the trainer's steps shifted
 *    by the same amount): every value is kept, in the order the lines came;
 *  - the first such line of a run is said once, in the trial's log (what was seen, and where the
 *    lines go now): the stored steps differ from the printed ones from then on.
 * A new run of the trainer (a resumed trial) starts a new placer: its steps are its own again, so
 * a resumed trainer that logs its steps anew replaces the points it logged at those steps before.
 *
 *   StepPlacer steps;
 *   const auto placed = steps.place(line.step.value_or(count), line.epoch, names);
 *   // placed.step: where the line's points go; placed.note: a line for the log, once
 */
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace sweep::scheduler {

class StepPlacer {
 public:
  struct Placed {
    std::int64_t step = 0;  // where the line's points are kept
    std::string note;       // non-empty once per run: why the steps differ from the trainer's
    std::string problem;    // non-empty: the line would go past kMaxPlacedStep, and why
  };

  // The largest step a line is kept at, shifted or not: the bound every step keeps
  // (metric_line.h's kMaxStep, 2^53), so a stored step stays exact in a double. A line that would
  // go past it is refused with the reason.
  static constexpr std::int64_t kMaxPlacedStep = std::int64_t{1} << 53;

  // The step for a line the trainer placed at `step` (and `epoch`, when the line has one) that
  // reports `names`. A line refused (problem) changes nothing.
  Placed place(std::int64_t step, std::optional<std::int64_t> epoch,
               const std::vector<std::string>& names);

 private:
  std::int64_t shift_ = 0;                  // added to the trainer's steps
  std::optional<std::int64_t> last_;        // the last step kept in this run
  std::optional<std::int64_t> last_epoch_;  // the epoch of the last line that gave one
  std::set<std::string> names_at_last_;     // the metrics kept at last_
  bool said_ = false;                       // the note was given
};

}  // namespace sweep::scheduler
