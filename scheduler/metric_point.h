/*
 * metric_point.h — one value of one named metric, as a trial reports it.
 *
 * `epoch` is the resource the stopping rules count in (median, ASHA and Hyperband compare trials
 * at equal epochs); `step` orders points inside a trial. wall_time 0 means "now": the trial
 * context fills it in, in seconds since the Unix epoch (UTC), so the store never sees a zero.
 */
#pragma once

#include <cstdint>
#include <string>

namespace sweep::scheduler {

struct MetricPoint {
  std::string name;        // "val_accuracy", "loss", ...
  double value = 0;        // may be NaN / Inf: sinks and rules must cope (rules ignore them)
  std::int64_t step = 0;   // monotone within a trial
  std::int64_t epoch = 0;  // 1-based; 0 = not tied to an epoch (stopping rules ignore it)
  double wall_time = 0;    // seconds since the Unix epoch, UTC; 0 = fill in at report()
};

// Seconds since the Unix epoch (UTC), with sub-second precision.
double wall_clock_now();

}  // namespace sweep::scheduler
