// Grid and random search through the Sampler interface: exactly config::trial_point's trials
// (numbers, order, values, texts, seeds, repeats), and after a restore only the numbers no
// earlier run used, lowest first.
#include "sweep/search/grid_random_sampler.h"

#include "search_test_util.h"

namespace sweep::search::testing {
namespace {

const std::string kGrid =
    "  method: grid\n  repeats: 2\n  parameters:\n"
    "    lr: {values: [0.1, 1e-3, .nan]}\n"
    "    width: {values: [010, 32]}\n"
    "    training.seed: {values: [7, 9]}\n";

const std::string kRandom =
    "  method: random\n  max_trials: 25\n  seed: 11\n  repeats: 3\n  parameters:\n"
    "    lr: {distribution: log_uniform_values, min: 1e-5, max: 1}\n"
    "    layers: {distribution: int_uniform, min: 1, max: 6}\n"
    "    act: {values: [relu, tanh], probabilities: [0.3, 0.7]}\n"
    "    drop: {distribution: q_uniform, min: 0, max: 0.5, q: 0.05}\n";

void expect_same_point(const config::TrialPoint& got, const config::TrialPoint& want) {
  EXPECT_EQ(got.number, want.number);
  EXPECT_EQ(got.repeat, want.repeat);
  EXPECT_EQ(got.seed, want.seed);
  EXPECT_EQ(got.params.dump(), want.params.dump());
  EXPECT_EQ(got.texts, want.texts);
  ASSERT_EQ(got.where.size(), want.where.size());
  for (std::size_t i = 0; i < got.where.size(); ++i) {
    EXPECT_EQ(got.where[i].line, want.where[i].line);
    EXPECT_EQ(got.where[i].drawn, want.where[i].drawn);
  }
}

void expect_trial_point_sequence(const std::string& body) {
  const config::SweepConfig config = load_sweep(body);
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  ASSERT_EQ(sampler->capacity(), config.trial_count());
  for (std::uint64_t i = 0; i < config.trial_count(); ++i) {
    const std::optional<config::TrialPoint> point = sampler->ask();
    ASSERT_TRUE(point) << "trial " << i;
    expect_same_point(*point, config::trial_point(config, i));
    sampler->tell(i, {TrialOutcome::complete, static_cast<double>(i), 1});  // ignored
  }
  EXPECT_FALSE(sampler->ask());
}

TEST(GridRandomSampler, GridGivesTrialPointsSequence) { expect_trial_point_sequence(kGrid); }

TEST(GridRandomSampler, RandomGivesTrialPointsSequence) { expect_trial_point_sequence(kRandom); }

// max_trials counts a grid's points, each with all its repeats (2 here): 5 points, 10 trials.
TEST(GridRandomSampler, GridWithMaxTrialsStopsAtTheCap) {
  const config::SweepConfig config = load_sweep(kGrid + "  max_trials: 5\n");
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  EXPECT_EQ(sampler->capacity(), 10u);
  std::optional<config::TrialPoint> last;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(last = sampler->ask());
  EXPECT_EQ(last->repeat, 1);
  EXPECT_FALSE(sampler->ask());
}

TEST(GridRandomSampler, AfterRestoreAsksOnlyNumbersNeverRestoredInOrder) {
  const config::SweepConfig config = load_sweep(kRandom);
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  // An earlier run stored trials 0-3, 5 and 9; 3 and 9 were unfinished (the run loop re-runs
  // those itself).
  for (std::uint64_t n : {0, 1, 2, 5})
    sampler->restore(config::trial_point(config, n), TrialResult{TrialOutcome::complete, 1.0, 1});
  for (std::uint64_t n : {9, 3}) sampler->restore(config::trial_point(config, n), std::nullopt);
  std::vector<int> asked;
  while (auto point = sampler->ask()) {
    expect_same_point(*point,
                      config::trial_point(config, static_cast<std::uint64_t>(point->number)));
    asked.push_back(point->number);
  }
  std::vector<int> expected = {4, 6, 7, 8};
  for (int n = 10; n < static_cast<int>(config.trial_count()); ++n) expected.push_back(n);
  EXPECT_EQ(asked, expected);
}

TEST(GridRandomSampler, RestoringEveryTrialLeavesNothingToAsk) {
  const config::SweepConfig config = load_sweep(kGrid);
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  for (std::uint64_t n = 0; n < config.trial_count(); ++n)
    sampler->restore(config::trial_point(config, n), std::nullopt);
  EXPECT_FALSE(sampler->ask());
}

}  // namespace
}  // namespace sweep::search::testing
