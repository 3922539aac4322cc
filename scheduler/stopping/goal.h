/*
 * goal.h — "better" for a metric with a goal (internal helper for the stopping rules).
 * Ties are never "better": every rule treats equal values in the trial's favour.
 */
#pragma once

#include <string>

#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler::detail {

inline bool is_better(double a, double b, MetricGoal goal) {
  return goal == MetricGoal::maximize ? a > b : a < b;
}

inline const char* goal_short(MetricGoal goal) {
  return goal == MetricGoal::maximize ? "max" : "min";
}

}  // namespace sweep::scheduler::detail
