/*
 * random_forest.cpp — see random_forest.h.
 *
 * The non-obvious decision: the target is standardised (mean 0, variance 1) before any tree is
 * grown, so the running sums that give each split's squared error stay well conditioned for a
 * metric like 0.9131 ± 0.0002; the shares do not depend on the target's scale.
 */
#include "reports/random_forest.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sweep::reports {
namespace {

class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) {  // [0, n)
    return static_cast<std::size_t>(static_cast<double>(next() >> 11) * 0x1.0p-53 *
                                    static_cast<double>(n));
  }

 private:
  std::uint64_t state_;
};

// One tree over one bootstrap sample. A "slot" is a place in the sample (a row drawn twice has
// two slots); a node is the same range [begin, end) of every feature's slot order.
class TreeGrower {
 public:
  TreeGrower(const std::vector<std::vector<double>>& columns, const std::vector<double>& target,
             const std::vector<std::size_t>& rows, const ForestOptions& options)
      : columns_(columns), rows_(rows), options_(options), gain_(columns.size(), 0.0) {
    const std::size_t n = rows.size();
    y_.resize(n);
    for (std::size_t s = 0; s < n; ++s) y_[s] = target[rows[s]];
    order_.resize(columns.size());
    for (std::size_t f = 0; f < columns.size(); ++f) {
      std::vector<std::uint32_t>& order = order_[f];
      order.resize(n);
      std::iota(order.begin(), order.end(), 0u);
      const std::vector<double>& x = columns[f];
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const double xa = x[rows[a]], xb = x[rows[b]];
        return xa != xb ? xa < xb : a < b;  // ties by slot: the same order everywhere
      });
    }
    goes_left_.resize(n);
    scratch_.resize(n);
  }

  // Grows the whole tree; returns each feature's decrease in squared error.
  std::vector<double> grow() {
    if (!y_.empty()) split(0, y_.size(), 0);
    return gain_;
  }

 private:
  double value(std::size_t feature, std::uint32_t slot) const {
    return columns_[feature][rows_[slot]];
  }

  void split(std::size_t begin, std::size_t end, int depth) {
    const std::size_t n = end - begin,
                      min_leaf = std::max<std::size_t>(1, options_.min_samples_leaf);
    if (n < 2 * min_leaf || depth >= options_.max_depth) return;
    double sum = 0, sum_sq = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const double y = y_[order_[0][k]];
      sum += y;
      sum_sq += y * y;
    }
    const double node_error = sum_sq - sum * sum / static_cast<double>(n);
    if (!(node_error > 1e-12)) return;

    double best_decrease = 0;
    std::size_t best_feature = columns_.size(), best_left = 0;
    for (std::size_t f = 0; f < columns_.size(); ++f) {
      const std::vector<std::uint32_t>& order = order_[f];
      double left_sum = 0, left_sq = 0;
      for (std::size_t k = begin; k + 1 < end; ++k) {
        const double y = y_[order[k]];
        left_sum += y;
        left_sq += y * y;
        const std::size_t left_n = k + 1 - begin, right_n = n - left_n;
        if (left_n < min_leaf) continue;
        if (right_n < min_leaf) break;
        if (!(value(f, order[k]) < value(f, order[k + 1]))) continue;  // no threshold between
        const double right_sum = sum - left_sum, right_sq = sum_sq - left_sq;
        const double error = (left_sq - left_sum * left_sum / static_cast<double>(left_n)) +
                             (right_sq - right_sum * right_sum / static_cast<double>(right_n));
        const double decrease = node_error - error;
        if (decrease > best_decrease) {
          best_decrease = decrease;
          best_feature = f;
          best_left = left_n;
        }
      }
    }
    if (best_feature == columns_.size() || !(best_decrease > 1e-12 * node_error)) return;
    gain_[best_feature] += best_decrease;

    // Partition every feature's order by the chosen split, keeping each side sorted.
    const std::size_t middle = begin + best_left;
    for (std::size_t k = begin; k < end; ++k) goes_left_[order_[best_feature][k]] = k < middle;
    for (std::vector<std::uint32_t>& order : order_) {
      std::size_t left = begin, right = 0;
      for (std::size_t k = begin; k < end; ++k) {
        if (goes_left_[order[k]])
          order[left++] = order[k];
        else
          scratch_[right++] = order[k];
      }
      std::copy(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(right),
                order.begin() + static_cast<std::ptrdiff_t>(left));
    }
    split(begin, middle, depth + 1);
    split(middle, end, depth + 1);
  }

  const std::vector<std::vector<double>>& columns_;
  const std::vector<std::size_t>& rows_;  // slot -> sample
  const ForestOptions& options_;
  std::vector<double> y_;                          // slot -> standardised target
  std::vector<std::vector<std::uint32_t>> order_;  // feature -> slots, sorted within each node
  std::vector<char> goes_left_;                    // slot -> side of the split being made
  std::vector<std::uint32_t> scratch_;
  std::vector<double> gain_;  // feature -> decrease in squared error
};

}  // namespace

std::vector<double> forest_importance(const std::vector<std::vector<double>>& columns,
                                      const std::vector<double>& target,
                                      const ForestOptions& options) {
  std::vector<double> shares(columns.size(), 0.0);
  const std::size_t n = target.size();
  if (columns.empty() || n < 2) return shares;

  double mean = 0;
  for (const double y : target) mean += y;
  mean /= static_cast<double>(n);
  double variance = 0;
  for (const double y : target) variance += (y - mean) * (y - mean);
  variance /= static_cast<double>(n);
  if (!(variance > 0)) return shares;
  const double scale = 1 / std::sqrt(variance);
  std::vector<double> standardised(n);
  for (std::size_t i = 0; i < n; ++i) standardised[i] = (target[i] - mean) * scale;

  SplitMix rng(options.seed);
  std::vector<std::size_t> rows(n);
  int trees_that_split = 0;
  for (int t = 0; t < options.trees; ++t) {
    for (std::size_t& row : rows) row = rng.below(n);
    const std::vector<double> gain = TreeGrower(columns, standardised, rows, options).grow();
    const double total = std::accumulate(gain.begin(), gain.end(), 0.0);
    if (!(total > 0)) continue;
    for (std::size_t f = 0; f < gain.size(); ++f) shares[f] += gain[f] / total;
    ++trees_that_split;
  }
  if (trees_that_split == 0) return shares;
  for (double& share : shares) share /= trees_that_split;
  return shares;
}

}  // namespace sweep::reports
