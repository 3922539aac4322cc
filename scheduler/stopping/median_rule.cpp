/*
 * median_rule.cpp — see median_rule.h for the rule. Each decision rescans every trial's series
 * (trials × epochs), which is microseconds for the hundreds of trials a sweep has; the scan keeps
 * the state to one map per trial, so there is nothing to keep consistent.
 */
#include "scheduler/stopping/median_rule.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/check.h"
#include "common/format.h"
#include "scheduler/stopping/goal.h"

namespace sweep::scheduler {

MedianStoppingRule::MedianStoppingRule(MedianRuleOptions options) : options_(std::move(options)) {
  if (options_.metric.empty()) throw Error("median stopping rule: no metric name given");
  if (options_.min_epochs < 1) throw Error("median stopping rule: min_epochs must be >= 1");
  if (options_.min_trials < 1) throw Error("median stopping rule: min_trials must be >= 1");
}

std::string MedianStoppingRule::describe() const {
  return "median(" + options_.metric + " " + detail::goal_short(options_.goal) +
         ", min_epochs=" + std::to_string(options_.min_epochs) +
         ", min_trials=" + std::to_string(options_.min_trials) + ")";
}

StopDecision MedianStoppingRule::observe(std::int64_t trial_id, const MetricPoint& point) {
  if (point.name != options_.metric || point.epoch < 1 || !std::isfinite(point.value))
    return StopDecision::keep_going();
  const std::int64_t epoch = point.epoch;
  std::lock_guard lock(mutex_);
  auto& mine = values_[trial_id];
  mine[epoch] = point.value;
  if (epoch < options_.min_epochs) return StopDecision::keep_going();

  double best = 0;
  bool has_best = false;
  for (auto it = mine.begin(); it != mine.end() && it->first <= epoch; ++it)
    if (!has_best || detail::is_better(it->second, best, options_.goal)) {
      best = it->second;
      has_best = true;
    }

  std::vector<double> running_averages;
  for (const auto& [other_id, series] : values_) {
    if (other_id == trial_id || series.empty() || series.rbegin()->first < epoch) continue;
    double sum = 0;
    int count = 0;
    for (auto it = series.begin(); it != series.end() && it->first <= epoch; ++it) {
      sum += it->second;
      ++count;
    }
    if (count > 0) running_averages.push_back(sum / count);
  }
  if (running_averages.size() < static_cast<std::size_t>(options_.min_trials))
    return StopDecision::keep_going();

  std::sort(running_averages.begin(), running_averages.end());
  const std::size_t n = running_averages.size();
  const double median = n % 2 == 1 ? running_averages[n / 2]
                                   : (running_averages[n / 2 - 1] + running_averages[n / 2]) / 2;
  if (!detail::is_better(median, best, options_.goal)) return StopDecision::keep_going();
  return StopDecision::stop_because("median: best " + options_.metric + " " + significant(best, 6) +
                                    " by epoch " + std::to_string(epoch) +
                                    " is worse than the median " + significant(median, 6) + " of " +
                                    std::to_string(n) + " other trials' running averages");
}

}  // namespace sweep::scheduler
