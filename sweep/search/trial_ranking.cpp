/*
 * trial_ranking.cpp — rank keys, Optuna's gamma and weights, the good/bad split.
 */
#include "sweep/search/trial_ranking.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sweep::search {

RankKey rank_key(const std::optional<TrialResult>& result, bool maximize) {
  if (!result) return {3, 0, 0};
  const double value = maximize ? -result->value : result->value;
  if (result->outcome == TrialOutcome::failed || !std::isfinite(value)) return {2, 0, 0};
  if (result->outcome == TrialOutcome::pruned)
    return {1, -static_cast<double>(result->depth), value};
  return {0, 0, value};
}

int gamma(int told, double fraction, int cap) {
  return std::min(static_cast<int>(std::ceil(fraction * static_cast<double>(told))), cap);
}

std::vector<double> default_weights(int count) {
  if (count < 25) return std::vector<double>(static_cast<std::size_t>(std::max(count, 0)), 1.0);
  // numpy.linspace(1/n, 1, n − 25), then 25 ones.
  std::vector<double> weights(static_cast<std::size_t>(count), 1.0);
  const int ramp = count - 25;
  const double first = 1.0 / count;
  for (int i = 0; i < ramp; ++i)
    weights[static_cast<std::size_t>(i)] =
        ramp == 1 ? first : first + (1.0 - first) * i / static_cast<double>(ramp - 1);
  return weights;
}

Split split_trials(const std::vector<RankKey>& keys, int good_count) {
  std::vector<std::size_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  Split split;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const std::size_t i = order[rank];
    const bool good = static_cast<int>(rank) < good_count && keys[i].stage <= 1;
    (good ? split.good : split.bad).push_back(i);
  }
  std::sort(split.good.begin(), split.good.end());
  std::sort(split.bad.begin(), split.bad.end());
  return split;
}

}  // namespace sweep::search
