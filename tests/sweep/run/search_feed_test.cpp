// search_feed: what a tpe sampler is told of a finished trial, from its TrialScore
// (common/trial_score.h) of the sweep's metric.
#include "sweep/run/search_feed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sweep::run {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TrialScore score_of(std::initializer_list<std::pair<double, double>> epoch_value,
                    MetricGoal goal = MetricGoal::maximize) {
  TrialScore score;
  std::int64_t step = 0;
  for (const auto& [epoch, value] : epoch_value) score.add(step += 10, value, goal, epoch);
  return score;
}

TEST(SearchFeed, ACompletedTrialIsToldItsBestFiniteValue) {
  const auto r = search_result(score_of({{1, 0.6}, {2, 0.8}, {3, 0.7}}), TrialState::completed);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, search::TrialOutcome::complete);
  EXPECT_EQ(r->value, 0.8);
  EXPECT_EQ(r->depth, 3);
  const auto down =
      search_result(score_of({{1, 0.6}, {2, kNaN}}, MetricGoal::minimize), TrialState::completed);
  EXPECT_EQ(down->value, 0.6);
}

// The last value is the value at the highest step, whatever it is: a trial stopped early whose
// last point is NaN is told NaN (ranked with the failed), not an earlier finite value.
TEST(SearchFeed, APrunedTrialIsToldItsLastValueAndTheEpochItReached) {
  const auto r = search_result(score_of({{1, 0.6}, {2.37, 0.5}}), TrialState::stopped_early);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, search::TrialOutcome::pruned);
  EXPECT_EQ(r->value, 0.5);
  EXPECT_EQ(r->depth, 2);  // a mid-epoch point counts at the epoch it lies in
  const auto nan_last = search_result(score_of({{1, 0.6}, {2, kNaN}}), TrialState::cancelled);
  EXPECT_TRUE(std::isnan(nan_last->value));
  EXPECT_EQ(nan_last->depth, 2);
}

TEST(SearchFeed, BrokenTrialsFailAndUnfinishedOnesStayPending) {
  const TrialScore score = score_of({{1, 0.9}});
  EXPECT_EQ(search_result(score, TrialState::diverged)->outcome, search::TrialOutcome::failed);
  EXPECT_EQ(search_result(score, TrialState::failed)->outcome, search::TrialOutcome::failed);
  EXPECT_FALSE(search_result(score, TrialState::interrupted));
  EXPECT_FALSE(search_result(score, TrialState::running));
  EXPECT_FALSE(search_result(TrialScore{}, TrialState::queued));
}

}  // namespace
}  // namespace sweep::run
