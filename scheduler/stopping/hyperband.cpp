/*
 * hyperband.cpp — see hyperband.h for W&B's rule. The threshold is recomputed from every trial's
 * history at each report (W&B recomputes at every agent poll); trials are few, so this stays cheap
 * and needs no incremental state.
 */
#include "scheduler/stopping/hyperband.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "common/format.h"
#include "scheduler/stopping/goal.h"

namespace sweep::scheduler {

std::vector<std::int64_t> hyperband_bands_from_min_iter(std::int64_t min_iter, int eta,
                                                        std::int64_t max_epochs_cap) {
  if (min_iter < 1) throw Error("hyperband: min_iter must be >= 1");
  if (eta < 2) throw Error("hyperband: eta must be >= 2");
  std::vector<std::int64_t> bands;
  for (std::int64_t band = min_iter; band <= max_epochs_cap;) {
    bands.push_back(band);
    if (band > max_epochs_cap / eta) break;
    band *= eta;
  }
  return bands;
}

std::vector<std::int64_t> hyperband_bands_from_max_iter(std::int64_t max_iter, int eta, int s) {
  if (max_iter < 1) throw Error("hyperband: max_iter must be >= 1");
  if (eta < 2) throw Error("hyperband: eta must be >= 2");
  if (s < 1) throw Error("hyperband: s must be >= 1");
  std::vector<std::int64_t> bands;
  double band = static_cast<double>(max_iter);
  for (int i = 0; i < s; ++i) {
    band /= eta;
    if (band < 1) break;
    bands.push_back(static_cast<std::int64_t>(band));
  }
  std::sort(bands.begin(), bands.end());
  bands.erase(std::unique(bands.begin(), bands.end()), bands.end());
  if (bands.empty())
    throw Error("hyperband: max_iter " + std::to_string(max_iter) + " / eta " +
                std::to_string(eta) + " is below 1: no band to stop at");
  return bands;
}

HyperbandRule::HyperbandRule(HyperbandOptions options) : options_(std::move(options)) {
  if (options_.metric.empty()) throw Error("hyperband: no metric name given");
  if (options_.eta < 2) throw Error("hyperband: eta must be >= 2");
  if (options_.bands.empty()) throw Error("hyperband: no bands");
  if (!std::is_sorted(options_.bands.begin(), options_.bands.end()) || options_.bands.front() < 1)
    throw Error("hyperband: bands must be ascending epochs >= 1");
}

std::string HyperbandRule::describe() const {
  std::string bands;
  for (std::size_t i = 0; i < options_.bands.size() && i < 6; ++i) {
    if (i > 0) bands += ',';
    bands += std::to_string(options_.bands[i]);
  }
  if (options_.bands.size() > 6) bands += ",...";
  return "hyperband(" + options_.metric + " " + detail::goal_short(options_.goal) +
         ", bands=" + bands + ", eta=" + std::to_string(options_.eta) +
         (options_.strict ? ", strict" : "") + ")";
}

StopDecision HyperbandRule::observe(std::int64_t trial_id, const MetricPoint& point) {
  if (point.name != options_.metric || point.epoch < 1 || !std::isfinite(point.value))
    return StopDecision::keep_going();
  std::lock_guard lock(mutex_);
  TrialHistory& mine = trials_[trial_id];
  mine.by_epoch[point.epoch] = point.value;
  if (!mine.has_best || detail::is_better(point.value, mine.best, options_.goal)) {
    mine.best = point.value;
    mine.has_best = true;
  }

  // The highest band this trial has passed (W&B's "closest band").
  auto after = std::upper_bound(options_.bands.begin(), options_.bands.end(), point.epoch);
  if (after == options_.bands.begin()) return StopDecision::keep_going();
  const std::int64_t band = *(after - 1);

  // Every trial's value at the band: its first report at an epoch >= band.
  std::vector<double> at_band;
  for (const auto& [id, history] : trials_) {
    auto it = history.by_epoch.lower_bound(band);
    if (it != history.by_epoch.end()) at_band.push_back(it->second);
  }
  std::sort(at_band.begin(), at_band.end(),
            [&](double a, double b) { return detail::is_better(a, b, options_.goal); });
  const std::size_t index = at_band.size() / static_cast<std::size_t>(options_.eta);
  const double threshold = at_band[index];
  // strict: the value this trial had at the band; else its best so far (kinder to noisy curves).
  const double compared = options_.strict ? mine.by_epoch.lower_bound(band)->second : mine.best;
  if (!detail::is_better(threshold, compared, options_.goal)) return StopDecision::keep_going();
  return StopDecision::stop_because(
      std::string("hyperband: ") + (options_.strict ? "" : "best ") + options_.metric +
      (options_.strict ? " at band " + std::to_string(band) + " " : " ") +
      significant(compared, 6) + " is worse than band " + std::to_string(band) + "'s threshold " +
      significant(threshold, 6) + " (top 1/" + std::to_string(options_.eta) + " of " +
      std::to_string(at_band.size()) + " trials at epoch " + std::to_string(band) + ")");
}

}  // namespace sweep::scheduler
