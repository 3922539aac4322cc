// common/trial_score.h: a trial's best and last value and the ranking of trials.
#include "common/trial_score.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(TrialScore, BestIsTheBestFiniteValueAndTheEarliestStepHoldsATie) {
  TrialScore up;
  for (auto [step, value] : {std::pair{1, 0.5}, {2, kInf}, {3, 0.8}, {4, kNaN}, {5, 0.8}})
    up.add(step, value, MetricGoal::maximize, step * 0.5);
  EXPECT_EQ(up.best, 0.8);
  EXPECT_EQ(up.best_step, 3);
  EXPECT_EQ(up.best_epoch, 1.5);
  EXPECT_EQ(up.last, 0.8);  // the point at the highest step
  EXPECT_EQ(up.last_step, 5);

  TrialScore down;
  for (auto [step, value] : {std::pair{3, 0.2}, {1, 0.2}, {2, -kInf}, {4, 0.3}})
    down.add(step, value, MetricGoal::minimize);
  EXPECT_EQ(down.best, 0.2);
  EXPECT_EQ(down.best_step, 1);  // points in any order: still the earliest step
  EXPECT_EQ(down.last, 0.3);
  EXPECT_EQ(down.last_step, 4);
}

TEST(TrialScore, OnlyNonFinitePointsGiveALastValueButNoBest) {
  TrialScore s;
  EXPECT_FALSE(s.best);
  EXPECT_FALSE(s.last);
  s.add(0, kNaN, MetricGoal::maximize);
  s.add(1, kInf, MetricGoal::maximize);
  EXPECT_FALSE(s.best);
  EXPECT_EQ(s.last, kInf);
  s.add(1, 0.25, MetricGoal::maximize);  // the same step again replaces the last value
  EXPECT_EQ(s.last, 0.25);
  EXPECT_EQ(s.best, 0.25);
}

TEST(TrialScore, RankingPutsScoredThenUnbrokenThenBetterThenEarlierThenLower) {
  const auto goal = MetricGoal::maximize;
  const RankedTrial none{std::nullopt, 0, 0, false};
  const RankedTrial broken_high{0.99, 1, 1, true};
  const RankedTrial low{0.5, 1, 2, false};
  const RankedTrial high_late{0.9, 7, 3, false};
  const RankedTrial high_early{0.9, 2, 4, false};
  const RankedTrial high_early_lower{0.9, 2, 0, false};
  EXPECT_TRUE(ranks_before(broken_high, none, goal));
  EXPECT_FALSE(ranks_before(none, broken_high, goal));
  EXPECT_FALSE(ranks_before(none, none, goal));
  EXPECT_TRUE(ranks_before(low, broken_high, goal));
  EXPECT_TRUE(ranks_before(high_late, low, goal));
  EXPECT_TRUE(ranks_before(high_early, high_late, goal));
  EXPECT_TRUE(ranks_before(high_early_lower, high_early, goal));
  EXPECT_FALSE(ranks_before(high_early, high_early, goal));
  EXPECT_TRUE(ranks_before(low, high_late, MetricGoal::minimize));
}

TEST(TrialScore, RankedReadsTheStateAsBroken) {
  TrialScore s;
  s.add(3, 0.7, MetricGoal::maximize);
  const RankedTrial r = ranked(s, 5, TrialState::diverged);
  EXPECT_EQ(r.best, 0.7);
  EXPECT_EQ(r.best_step, 3);
  EXPECT_EQ(r.number, 5);
  EXPECT_TRUE(r.broken);
  EXPECT_FALSE(ranked(s, 5, TrialState::stopped_early).broken);
}

}  // namespace
}  // namespace sweep
