// Which told trials are good: complete by value, pruned below complete and deeper first, failed
// and NaN worst, pending after everything; Optuna's gamma and weights.
#include "sweep/search/trial_ranking.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sweep::search {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TrialResult complete(double value) { return {TrialOutcome::complete, value, 10}; }
TrialResult pruned(double value, int depth) { return {TrialOutcome::pruned, value, depth}; }
TrialResult failed() { return {TrialOutcome::failed, 0.5, 3}; }

// The order of `results` best first, as indices.
std::vector<std::size_t> ranking(const std::vector<std::optional<TrialResult>>& results,
                                 bool maximize) {
  std::vector<RankKey> keys;
  for (const auto& r : results) keys.push_back(rank_key(r, maximize));
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < keys.size(); ++i) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  return order;
}

TEST(TrialRanking, CompleteTrialsByValue) {
  EXPECT_EQ(ranking({complete(3), complete(1), complete(2)}, false),
            (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(ranking({complete(3), complete(1), complete(2)}, true),
            (std::vector<std::size_t>{0, 2, 1}));
}

TEST(TrialRanking, PrunedRankBelowCompleteAndDeeperFirst) {
  // Minimizing: a pruned trial with the best value still ranks below every complete one, and
  // one stopped at epoch 8 above one stopped at 3, whatever their values.
  EXPECT_EQ(
      ranking({pruned(0.1, 3), complete(5), pruned(0.9, 8), pruned(0.2, 8), complete(4)}, false),
      (std::vector<std::size_t>{4, 1, 3, 2, 0}));
  // Maximizing: the same by depth, then the larger value.
  EXPECT_EQ(ranking({pruned(0.9, 3), pruned(0.1, 8), pruned(0.2, 8)}, true),
            (std::vector<std::size_t>{2, 1, 0}));
}

TEST(TrialRanking, FailedAndNanRankWorstPendingAfterThem) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ranking({std::nullopt, failed(), complete(kNan), pruned(kNan, 9), complete(inf),
                     pruned(100, 1), complete(100)},
                    false),
            (std::vector<std::size_t>{6, 5, 1, 2, 3, 4, 0}));
  // Maximizing, an infinite value is a diverged trial too, not the best one.
  EXPECT_EQ(rank_key(complete(inf), true).stage, 2);
}

TEST(TrialRanking, SplitTakesTheBestAndNeverAFailedOne) {
  std::vector<RankKey> keys;
  for (const auto& r : std::vector<std::optional<TrialResult>>{
           complete(5), failed(), std::nullopt, complete(1), pruned(0, 4), complete(3)})
    keys.push_back(rank_key(r, false));
  const Split two = split_trials(keys, 2);
  EXPECT_EQ(two.good, (std::vector<std::size_t>{3, 5}));  // in the order asked
  EXPECT_EQ(two.bad, (std::vector<std::size_t>{0, 1, 2, 4}));
  // Asking for more good trials than there are successful ones leaves the failed ones bad.
  const Split all = split_trials(keys, 6);
  EXPECT_EQ(all.good, (std::vector<std::size_t>{0, 3, 4, 5}));
  EXPECT_EQ(all.bad, (std::vector<std::size_t>{1, 2}));
}

TEST(TrialRanking, GammaAndWeightsAreOptunasDefaults) {
  EXPECT_EQ(gamma(0), 0);
  EXPECT_EQ(gamma(1), 1);
  EXPECT_EQ(gamma(10), 1);
  EXPECT_EQ(gamma(11), 2);
  EXPECT_EQ(gamma(100), 10);
  EXPECT_EQ(gamma(1000), 25);
  EXPECT_EQ(default_weights(3), (std::vector<double>{1, 1, 1}));
  const std::vector<double> w = default_weights(30);  // linspace(1/30, 1, 5), then 25 ones
  ASSERT_EQ(w.size(), 30u);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 30);
  EXPECT_DOUBLE_EQ(w[2], 1.0 / 30 + (1 - 1.0 / 30) / 2);
  EXPECT_DOUBLE_EQ(w[4], 1.0);
  EXPECT_DOUBLE_EQ(w[29], 1.0);
  EXPECT_DOUBLE_EQ(default_weights(26)[0], 1.0 / 26);
}

}  // namespace
}  // namespace sweep::search
