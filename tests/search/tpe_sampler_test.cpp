// TpeSampler's contract: determinism, the random start-up, pending trials (constant liar),
// repeats, restore (resume) and the errors of a misuse.
#include <algorithm>
#include <cmath>
#include <set>

#include "search_test_util.h"

namespace sweep::search::testing {
namespace {

const std::string kMixed =
    "    x: {distribution: uniform, min: -5, max: 5}\n"
    "    lr: {distribution: log_uniform_values, min: 1e-5, max: 1}\n"
    "    layers: {distribution: int_uniform, min: 1, max: 8}\n"
    "    act: {values: [relu, tanh, gelu]}\n";

double mixed_objective(const sweep::Json& p) {
  const double x = p["x"].get<double>();
  const double lr = std::log10(p["lr"].get<double>());
  const double layers = p["layers"].get<double>();
  const double act = p["act"] == "tanh" ? 0.0 : 1.0;
  return (x - 1.2) * (x - 1.2) + (lr + 3) * (lr + 3) + 0.1 * (layers - 4) * (layers - 4) + act;
}

std::vector<std::string> dumps(const std::vector<config::TrialPoint>& points) {
  std::vector<std::string> out;
  for (const config::TrialPoint& p : points) out.push_back(p.params.dump());
  return out;
}

TEST(TpeSampler, SameSeedSameSuggestions) {
  const config::SearchSpace space = space_of(kMixed);
  TpeSampler a(space, {}, false, 42, 40);
  TpeSampler b(space, {}, false, 42, 40);
  TpeSampler other(space, {}, false, 43, 40);
  const auto first = dumps(drive(a, mixed_objective, 40));
  EXPECT_EQ(first.size(), 40u);
  EXPECT_EQ(first, dumps(drive(b, mixed_objective, 40)));
  const auto third = dumps(drive(other, mixed_objective, 40));
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_NE(first[i], third[i]) << "trial " << i;
}

TEST(TpeSampler, StartsWithRandomSearchsOwnDraws) {
  const config::SweepConfig random =
      load_sweep("  method: random\n  max_trials: 40\n  seed: 5\n  parameters:\n" + kMixed);
  TpeSampler tpe(random.sweep.space, {}, false, 5, 40);
  const std::vector<config::TrialPoint> points = drive(tpe, mixed_objective, 40);
  for (int i = 0; i < 10; ++i)  // n_startup_trials
    EXPECT_EQ(points[i].params.dump(), config::trial_point(random, i).params.dump());
  int same_as_random = 0;
  for (int i = 10; i < 40; ++i)
    same_as_random += points[i].params == config::trial_point(random, i).params;
  EXPECT_EQ(same_as_random, 0);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

TEST(TpeSampler, LearnsAfterTheStartUp) {
  // The model's suggestions beat the start-up's random draws on a smooth objective. Medians:
  // TPE keeps exploring now and then, as it should, with values as bad as random's.
  const config::SearchSpace space = space_of(kMixed);
  double startup_sum = 0, late_sum = 0;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    TpeSampler tpe(space, {}, false, seed, 60);
    const std::vector<config::TrialPoint> points = drive(tpe, mixed_objective, 60);
    std::vector<double> startup, late;
    for (int i = 0; i < 10; ++i) startup.push_back(mixed_objective(points[i].params));
    for (int i = 40; i < 60; ++i) late.push_back(mixed_objective(points[i].params));
    EXPECT_LT(median(late), median(startup)) << "seed " << seed;
    startup_sum += median(startup);
    late_sum += median(late);
  }
  EXPECT_LT(late_sum, startup_sum / 3);
}

// Eight slots asking at once, none told yet: eight different points.
void expect_eight_distinct(TpeSampler& tpe) {
  std::set<std::string> seen;
  for (int i = 0; i < 8; ++i) {
    const std::optional<config::TrialPoint> point = tpe.ask();
    ASSERT_TRUE(point);
    EXPECT_TRUE(seen.insert(point->params.dump()).second) << point->params.dump();
  }
}

TEST(TpeSampler, EightPendingAsksGiveEightPointsDuringStartUp) {
  TpeSampler tpe(space_of(kMixed), {}, false, 1, 100);
  expect_eight_distinct(tpe);
}

TEST(TpeSampler, EightPendingAsksGiveEightPointsAfterStartUp) {
  TpeSampler tpe(space_of(kMixed), {}, false, 1, 100);
  drive(tpe, mixed_objective, 30);
  expect_eight_distinct(tpe);
}

TEST(TpeSampler, EightPendingAsksGiveEightPointsOnASmallGrid) {
  // 6 × 4 = 24 points, 10 told and 8 pending: the model would like the best one eight times
  // over; every one of the 18 is a different point.
  TpeSampler tpe(space_of("    a: {distribution: int_uniform, min: 1, max: 6}\n"
                          "    b: {values: [w, x, y, z]}\n"),
                 {}, false, 2, 100);
  const Objective objective = [](const sweep::Json& p) {
    return p["a"].get<double>() + (p["b"] == "y" ? 0.0 : 1.0);
  };
  std::set<std::string> seen;
  for (const auto& point : drive(tpe, objective, 10)) seen.insert(point.params.dump());
  EXPECT_EQ(seen.size(), 10u);
  for (int i = 0; i < 8; ++i) {
    const std::optional<config::TrialPoint> point = tpe.ask();
    ASSERT_TRUE(point);
    EXPECT_TRUE(seen.insert(point->params.dump()).second) << point->params.dump();
  }
}

TEST(TpeSampler, RepeatsRunEachSuggestionWithSuccessiveSeeds) {
  TrialLayout layout;
  layout.repeats = 3;
  layout.base_training_seed = 100;
  TpeSampler tpe(space_of(kMixed), {}, false, 9, 20, layout);
  EXPECT_EQ(tpe.capacity(), 60u);
  const std::vector<config::TrialPoint> points = drive(tpe, mixed_objective, 60);
  ASSERT_EQ(points.size(), 60u);
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(points[i].number, i);
    EXPECT_EQ(points[i].repeat, i % 3);
    EXPECT_EQ(points[i].seed, 100u + static_cast<std::uint64_t>(i % 3));
    EXPECT_EQ(points[i].params, points[i - i % 3].params);
    if (i % 3 == 0 && i > 0) {
      EXPECT_NE(points[i].params, points[i - 1].params);
    }
  }
  EXPECT_EQ(tpe.told(), 60u);  // every repeat is an observation
  EXPECT_FALSE(tpe.ask());
}

TEST(TpeSampler, ASweptTrainingSeedGivesTheSeed) {
  TrialLayout layout;
  layout.repeats = 2;
  TpeSampler tpe(space_of("    x: {min: 0.0, max: 1.0}\n"
                          "    training.seed: {values: [7]}\n"),
                 {}, false, 0, 3, layout);
  const auto points = drive(
      tpe, [](const sweep::Json& p) { return p["x"].get<double>(); }, 6);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].seed, 7u);
  EXPECT_EQ(points[1].seed, 8u);
}

TEST(TpeSampler, ResumeContinuesWithoutRepeatingAFinishedPoint) {
  // 5 × 4 = 20 points; 12 finished and 2 unfinished stored by an earlier run.
  const config::SearchSpace space = space_of(
      "    a: {distribution: int_uniform, min: 0, max: 4}\n"
      "    b: {distribution: q_uniform, min: 0, max: 0.3, q: 0.1}\n");
  const Objective objective = [](const sweep::Json& p) {
    return std::abs(p["a"].get<double>() - 2) + std::abs(p["b"].get<double>() - 0.1);
  };
  TpeSampler first(space, {}, false, 4, 18);
  const std::vector<config::TrialPoint> earlier = drive(first, objective, 12);
  std::vector<config::TrialPoint> unfinished = {*first.ask(), *first.ask()};

  TpeSampler resumed(space, {}, false, 4, 18);
  for (const config::TrialPoint& p : earlier)
    resumed.restore(p, TrialResult{TrialOutcome::complete, objective(p.params), 1});
  for (const config::TrialPoint& p : unfinished) resumed.restore(p, std::nullopt);
  EXPECT_EQ(resumed.told(), 12u);

  std::set<std::string> stored;
  for (const auto& p : earlier) stored.insert(p.params.dump());
  for (const auto& p : unfinished) stored.insert(p.params.dump());
  int number = 14;
  while (auto point = resumed.ask()) {
    EXPECT_EQ(point->number, number++);
    EXPECT_TRUE(stored.insert(point->params.dump()).second) << point->params.dump();
    resumed.tell(static_cast<std::uint64_t>(point->number),
                 {TrialOutcome::complete, objective(point->params), 1});
  }
  EXPECT_EQ(number, 18);
  // The unfinished trials, re-run by the run loop, are told like any other.
  resumed.tell(12, {TrialOutcome::complete, 1.0, 1});
  EXPECT_EQ(resumed.told(), 17u);
}

TEST(TpeSampler, ResumeOfARepeatedSuggestionRunsTheRestWithItsValues) {
  TrialLayout layout;
  layout.repeats = 3;
  const config::SearchSpace space = space_of(kMixed);
  TpeSampler first(space, {}, false, 8, 10, layout);
  const std::vector<config::TrialPoint> earlier = drive(first, mixed_objective, 4);
  TpeSampler resumed(space, {}, false, 8, 10, layout);
  for (const auto& p : earlier)
    resumed.restore(p, TrialResult{TrialOutcome::complete, mixed_objective(p.params), 1});
  const std::optional<config::TrialPoint> next = resumed.ask();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->number, 4);
  EXPECT_EQ(next->repeat, 1);
  EXPECT_EQ(next->params, earlier[3].params);
}

TEST(TpeSampler, RestoredValuesThatNoLongerFitAreNotModelled) {
  const config::SearchSpace space = space_of(kMixed);
  TpeSampler tpe(space, {}, false, 1, 40);
  for (int i = 0; i < 15; ++i) {
    config::TrialPoint old;
    old.number = i;
    old.params = {{"x", 0.5 * i - 3}, {"lr", 1e-3}, {"layers", 2}, {"act", "swish"}};
    tpe.restore(old, TrialResult{TrialOutcome::complete, static_cast<double>(i), 1});
  }
  const auto points = drive(tpe, mixed_objective, 25);
  EXPECT_EQ(points.size(), 25u);
  EXPECT_EQ(points.front().number, 15);
}

TEST(TpeSampler, AConstantOnlySpaceStillRuns) {
  TpeSampler tpe(space_of("    x: {value: 3}\n"), {}, true, 0, 4);
  const auto points = drive(
      tpe, [](const sweep::Json&) { return 1.0; }, 10);
  ASSERT_EQ(points.size(), 4u);
  for (const auto& p : points) EXPECT_EQ(p.params["x"], 3);
}

TEST(TpeSampler, UnivariateModeLearnsToo) {
  TpeOptions options;
  options.multivariate = false;
  TpeSampler tpe(space_of(kMixed), options, false, 3, 60);
  const std::vector<config::TrialPoint> points = drive(tpe, mixed_objective, 60);
  double best = 1e9;
  for (const auto& p : points) best = std::min(best, mixed_objective(p.params));
  EXPECT_LT(best, 1.0);
}

TEST(TpeSampler, TellingANumberNeverAskedIsAnError) {
  TpeSampler tpe(space_of(kMixed), {}, false, 0, 10);
  EXPECT_THROW(tpe.tell(3, {}), sweep::Error);
  tpe.ask();
  EXPECT_NO_THROW(tpe.tell(0, {}));
  EXPECT_NO_THROW(tpe.tell(0, {TrialOutcome::complete, 2.0, 1}));  // replaces
  EXPECT_EQ(tpe.told(), 1u);
}

TEST(TpeSampler, AContinuousParameterWithoutARangeIsRefused) {
  config::SearchSpace space = space_of("    x: {min: 1.0, max: 2.0}\n");
  space.params[0].max = 1.0;
  EXPECT_THROW(TpeSampler(space, {}, false, 0, 10), sweep::Error);
}

}  // namespace
}  // namespace sweep::search::testing
