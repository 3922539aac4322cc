/*
 * asha.cpp — see asha.h for the rule. Rung k's values live in rungs_[k] in arrival order; a
 * decision counts the strictly better values (linear in the trials at the rung: small, and it
 * keeps ties simple to reason about).
 */
#include "scheduler/stopping/asha.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/format.h"
#include "scheduler/stopping/goal.h"

namespace sweep::scheduler {

AshaRule::AshaRule(AshaOptions options) : options_(std::move(options)) {
  if (options_.metric.empty()) throw Error("asha: no metric name given");
  if (options_.min_epochs < 1) throw Error("asha: min_epochs must be >= 1");
  if (options_.eta < 2) throw Error("asha: eta must be >= 2, not " + std::to_string(options_.eta));
  if (options_.max_epochs < 0) throw Error("asha: max_epochs must be >= 0 (0 = no cap)");
}

std::string AshaRule::describe() const {
  return "asha(" + options_.metric + " " + detail::goal_short(options_.goal) +
         ", min_epochs=" + std::to_string(options_.min_epochs) +
         ", eta=" + std::to_string(options_.eta) +
         (options_.max_epochs > 0 ? ", max_epochs=" + std::to_string(options_.max_epochs) : "") +
         ")";
}

std::vector<std::int64_t> AshaRule::rungs_through(std::int64_t through_epoch) const {
  std::vector<std::int64_t> rungs;
  for (std::int64_t rung = options_.min_epochs; rung <= through_epoch;) {
    if (options_.max_epochs > 0 && rung >= options_.max_epochs) break;
    rungs.push_back(rung);
    if (rung > through_epoch / options_.eta) break;  // next would pass through_epoch (no overflow)
    rung *= options_.eta;
  }
  return rungs;
}

StopDecision AshaRule::observe(std::int64_t trial_id, const MetricPoint& point) {
  if (point.name != options_.metric || point.epoch < 1 || !std::isfinite(point.value))
    return StopDecision::keep_going();
  const std::vector<std::int64_t> rungs = rungs_through(point.epoch);
  std::lock_guard lock(mutex_);
  if (rungs_.size() < rungs.size()) rungs_.resize(rungs.size());
  for (std::size_t k = 0; k < rungs.size(); ++k) {
    Rung& rung = rungs_[k];
    if (!rung.trials_seen.insert(trial_id).second) continue;  // judged here already
    rung.values.push_back(point.value);
    const std::size_t n = rung.values.size();
    const std::size_t rank = 1 + static_cast<std::size_t>(std::count_if(
                                     rung.values.begin(), rung.values.end(), [&](double other) {
                                       return detail::is_better(other, point.value, options_.goal);
                                     }));
    const std::size_t keep = std::max<std::size_t>(1, n / static_cast<std::size_t>(options_.eta));
    if (rank > keep)
      return StopDecision::stop_because("asha: rung " + std::to_string(k) + " (epoch " +
                                        std::to_string(rungs[k]) + ") not in top 1/" +
                                        std::to_string(options_.eta) + " (" + options_.metric +
                                        " " + significant(point.value, 6) + " ranks " +
                                        std::to_string(rank) + " of " + std::to_string(n) + ")");
  }
  return StopDecision::keep_going();
}

}  // namespace sweep::scheduler
