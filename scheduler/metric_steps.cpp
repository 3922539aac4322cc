/*
 * metric_steps.cpp — StepPlacer: the trainer's step while it moves forward, the run's next step
 * when it does not (metric_steps.h).
 */
#include "scheduler/metric_steps.h"

#include <algorithm>

namespace sweep::scheduler {

StepPlacer::Placed StepPlacer::place(std::int64_t step, std::optional<std::int64_t> epoch,
                                     const std::vector<std::string>& names) {
  Placed placed;
  // No overflow: the trainer's step is at most 2^53 (metric_line.h), and a shift makes the
  // line's step the last one kept plus one, so shift_ stays at most 2^53 + 1.
  std::int64_t at = step + shift_;
  const bool later_epoch = epoch && last_epoch_ && *epoch > *last_epoch_;
  const bool repeats = last_ && at == *last_ &&
                       (later_epoch || std::any_of(names.begin(), names.end(), [&](const auto& n) {
                          return names_at_last_.contains(n);
                        }));
  if (last_ && (at < *last_ || repeats)) {
    if (*last_ >= kMaxPlacedStep) {
      placed.problem = "no step is left after " + std::to_string(*last_) +
                       " for a line whose step goes back (the trainer's steps go back too often)";
      return placed;
    }
    const std::int64_t next = *last_ + 1;
    if (!said_) {  // the first shift of a run: shift_ is still 0, `at` the printed step
      said_ = true;
      const std::string seen =
          later_epoch ? "step " + std::to_string(step) + " again in epoch " +
                            std::to_string(*epoch) + " (a step counted within each epoch)"
          : at < *last_ ? "step " + std::to_string(step) + " after step " + std::to_string(*last_) +
                              " (steps went backward)"
                        : "step " + std::to_string(step) + " again for a metric it already gave";
      placed.note = "metric lines: " + seen +
                    "; every value is kept: from this line on, points go after the steps "
                    "already kept (this one at step " +
                    std::to_string(next) + "), not at the printed steps";
    }
    shift_ += next - at;
    at = next;
  } else if (at > kMaxPlacedStep) {  // moved forward, but by the steps shifted before
    placed.problem = "step " + std::to_string(step) + " would be kept at step " +
                     std::to_string(at) + ", past 2^53 (the trainer's steps went back before)";
    return placed;
  }
  if (!last_ || at > *last_) {
    last_ = at;
    names_at_last_.clear();
  }
  names_at_last_.insert(names.begin(), names.end());
  if (epoch) last_epoch_ = epoch;
  placed.step = at;
  return placed;
}

}  // namespace sweep::scheduler
