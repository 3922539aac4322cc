/*
 * goal.h — "better" for a metric with a goal (internal helper for the stopping rules).
 * Ties are never "better": every rule treats equal values in the trial's favour.
 */
#pragma once

#include <string>

#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler::detail {

// common/trial_score.h's strict comparison, the one every reader of a metric's goal uses.
using sweep::is_better;

inline const char* goal_short(MetricGoal goal) {
  return goal == MetricGoal::maximize ? "max" : "min";
}

}  // namespace sweep::scheduler::detail
