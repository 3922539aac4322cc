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
  // Where in training the point lies, in (fractional) epochs, for charts only: a mid-epoch
  // train_loss point has epoch 0 (the rules ignore it) but a position such as 2.37. 0 = unknown.
  double epoch_position = 0;
};

// Seconds since the Unix epoch (UTC), with sub-second precision.
double wall_clock_now();

}  // namespace sweep::scheduler
