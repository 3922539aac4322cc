/*
 * median_rule.h — the median stopping rule (Google Vizier; Ray Tune's MedianStoppingRule).
 *
 * Decision (our pick, documented): when trial T reports its metric at epoch e >= min_epochs, take
 * T's BEST value so far (epochs <= e) and, for every OTHER trial that has reported at some epoch
 * >= e, the RUNNING AVERAGE of its values at epochs <= e. With at least min_trials such trials, T
 * stops when its best is strictly worse than their median (Vizier's rule). Unlike Ray, running
 * trials count as soon as they reached epoch e, so the rule acts during an asynchronous sweep
 * without waiting for trials to complete. A trial reporting the same epoch twice keeps the last
 * value for that epoch.
 */
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler {

struct MedianRuleOptions {
  std::string metric;
  MetricGoal goal = MetricGoal::maximize;
  std::int64_t min_epochs = 1;  // grace: no decision before this epoch
  int min_trials = 3;           // other trials needed at epoch e before the rule acts
};

class MedianStoppingRule final : public StoppingPolicy {
 public:
  explicit MedianStoppingRule(MedianRuleOptions options);
  StopDecision observe(std::int64_t trial_id, const MetricPoint& point) override;
  std::string describe() const override;

 private:
  MedianRuleOptions options_;
  std::mutex mutex_;
  std::unordered_map<std::int64_t, std::map<std::int64_t, double>> values_;  // trial → epoch → v
};

}  // namespace sweep::scheduler
