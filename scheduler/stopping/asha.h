/*
 * asha.h — asynchronous successive halving (Li et al. 2020), as a stopping rule (Ray's ASHA).
 *
 * Rungs sit at epochs min_epochs * eta^k (k = 0, 1, ...) below max_epochs (a trial that reaches
 * max_epochs is finishing anyway). The first time a trial reports its metric at an epoch >= a rung,
 * that value is recorded at the rung and judged once, against every value recorded there so far
 * (itself included, from trials running or finished): with n values, the trial continues only if
 * its rank (1 = best; ties count in its favour) is <= max(1, floor(n / eta)), i.e. it is in the top
 * 1/eta — else it stops with "asha: rung k (epoch r) not in top 1/eta (...)". Being judged against
 * those that got there first is what makes it asynchronous: early arrivals are judged leniently,
 * and a trial already past a rung is never re-judged there.
 */
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "scheduler/stopping/stopping_policy.h"

namespace sweep::scheduler {

struct AshaOptions {
  std::string metric;
  MetricGoal goal = MetricGoal::maximize;
  std::int64_t min_epochs = 1;  // first rung
  int eta = 3;                  // reduction factor, >= 2
  std::int64_t max_epochs = 0;  // no rung at or above this; 0 = unbounded
};

class AshaRule final : public StoppingPolicy {
 public:
  explicit AshaRule(AshaOptions options);
  StopDecision observe(std::int64_t trial_id, const MetricPoint& point) override;
  std::string describe() const override;

  // Rung epochs up to `through_epoch` (for tests and the report).
  std::vector<std::int64_t> rungs_through(std::int64_t through_epoch) const;

 private:
  struct Rung {
    std::vector<double> values;  // as recorded, one per trial
    std::unordered_set<std::int64_t> trials_seen;
  };
  AshaOptions options_;
  std::mutex mutex_;
  std::vector<Rung> rungs_;  // grows as trials reach higher rungs
};

}  // namespace sweep::scheduler
