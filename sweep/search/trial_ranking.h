/*
 * trial_ranking.h — which observed trials are "good" (the density l) and which "bad" (g).
 *
 * Optuna's rule, with sweep's outcomes: trials sort by (stage, depth, value), lower first:
 * complete trials by value (negated when maximizing), then pruned trials, deeper first and by
 * the last value they reported (a trial stopped at epoch 8 ranks above one stopped at 3,
 * whatever their values), then failed trials and trials whose value is NaN or infinite, then
 * pending trials (asked, not told: the "constant liar" counts them as the worst). The best
 * gamma(n) of the n told trials are good, never a failed one; the rest are bad.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sweep/search/sampler.h"

namespace sweep::search {

// A trial's place in the ranking; compare with operator<, lower is better.
struct RankKey {
  int stage = 0;     // 0 complete, 1 pruned, 2 failed, 3 pending
  double depth = 0;  // pruned: −depth (deeper first)
  double value = 0;  // complete, pruned: the value, negated when maximizing
  auto operator<=>(const RankKey&) const = default;
};

// The key of a result (nullopt: pending).
RankKey rank_key(const std::optional<TrialResult>& result, bool maximize);

// gamma(n) = min(ceil(fraction·n), cap): how many of n told trials are good (Optuna's default:
// min(ceil(0.1·n), 25)).
int gamma(int told, double fraction = 0.1, int cap = 25);

// Optuna's default_weights: the kernel weight of each of n observations in the order they were
// asked, 1 for all when n < 25, else a ramp from 1/n up to 1 for all but the newest 25.
std::vector<double> default_weights(int count);

struct Split {
  std::vector<std::size_t> good;  // indices into the keys, ascending (the order asked)
  std::vector<std::size_t> bad;
};

// The best `good_count` of `keys` (given in the order asked; ties keep that order), never one
// that failed or is pending, and the rest.
Split split_trials(const std::vector<RankKey>& keys, int good_count);

}  // namespace sweep::search
