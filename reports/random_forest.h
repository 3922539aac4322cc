/*
 * random_forest.h — how much each feature explains of a target: the mean decrease in impurity
 * of a small regression random forest (what W&B's parameter importance and Optuna's
 * MeanDecreaseImpurityImportanceEvaluator report).
 *
 * The non-obvious decisions:
 *  - Only the importances are wanted, never a prediction, so no tree is kept: each node's best
 *    split adds its decrease in squared error to its feature's total and the recursion goes on.
 *  - Every tree sees every feature at each split (scikit-learn's default for regression, which
 *    Optuna uses): the trees differ by their bootstrap sample only, so a feature that drives the
 *    target takes the splits and one that does not is chosen only to fit the leftover noise.
 *  - Each feature's samples are sorted once per tree and kept sorted by partitioning them down
 *    the tree (classic CART presorting), so a tree costs O(features × samples × depth): a forest
 *    over 1,000 trials takes milliseconds.
 *  - Deterministic: a local SplitMix64 (not <random>'s distributions, which differ between
 *    standard libraries) draws the bootstrap samples, and ties between equal values break by
 *    sample, so the same input gives the same importances everywhere.
 *
 * Thread safety: a pure function.
 *
 *   std::vector<std::vector<double>> columns = {lr_values, batch_values};  // one per feature
 *   std::vector<double> shares = forest_importance(columns, metric_values, {});  // sums to 1
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sweep::reports {

struct ForestOptions {
  int trees = 64;
  int max_depth = 16;
  std::size_t min_samples_leaf = 1;
  std::uint64_t seed = 20240917;
};

// Each feature's share of the forest's decrease in squared error (per tree normalised to sum to
// 1, then averaged over the trees that split at all), in the order of `columns`. Every column
// holds one finite value per sample (same length as `target`). All zeros when no tree could split
// (a constant target, constant features, fewer than 2 samples).
std::vector<double> forest_importance(const std::vector<std::vector<double>>& columns,
                                      const std::vector<double>& target,
                                      const ForestOptions& options);

}  // namespace sweep::reports
