// The config side of method: tpe (and W&B's bayes, read as tpe): max_trials required, a
// continuous range required, trial counts, make_sampler, and tpe's trials filled exactly as
// config::trial_point fills random search's.
#include <algorithm>

#include "search_test_util.h"
#include "sweep/search/grid_random_sampler.h"

namespace sweep::search::testing {
namespace {

const std::string kTrainer = "trainer: {command: \"true\"}\n";

bool has_line(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

TEST(TpeConfig, TpeWithoutMaxTrialsIsAnError) {
  const auto lines = problems(kTrainer +
                              "sweep:\n  method: tpe\n  metric: {name: score}\n  parameters:\n"
                              "    x: {min: 0.0, max: 1.0}\n");
  EXPECT_TRUE(has_line(lines,
                       "t.yaml:3:11: key 'sweep.method': tpe needs max_trials: N (W&B's run_cap), "
                       "the number of trials it suggests"))
      << joined(lines);
}

TEST(TpeConfig, BayesWithoutMaxTrialsSaysBayes) {
  const auto lines = problems(kTrainer +
                              "sweep:\n  method: bayes\n  metric: {name: score}\n  parameters:\n"
                              "    x: {min: 0.0, max: 1.0}\n");
  EXPECT_TRUE(has_line(lines,
                       "t.yaml:3:11: key 'sweep.method': bayes (run as tpe) needs max_trials: N "
                       "(W&B's run_cap), the number of trials it suggests"))
      << joined(lines);
}

TEST(TpeConfig, MinEqualToMaxIsAnErrorForTpe) {
  const auto lines = problems(kTrainer +
                              "sweep:\n  method: tpe\n  max_trials: 5\n  metric: {name: score}\n"
                              "  parameters:\n    x: {distribution: uniform, min: 2, max: 2}\n");
  EXPECT_TRUE(has_line(lines,
                       "t.yaml:7:45: key 'sweep.parameters.x.max': tpe needs max > min, got min = "
                       "max = 2 (a parameter with one value is written value: 2)"))
      << joined(lines);
  // Random search draws that one value, as before.
  EXPECT_TRUE(problems(kTrainer + "sweep:\n  method: random\n  max_trials: 5\n  metric: {name: "
                                  "score}\n  parameters:\n    x: {min: 2.0, max: 2.0}\n")
                  .empty());
}

TEST(TpeConfig, MinAboveMaxIsAnErrorForTpe) {
  const auto lines = problems(kTrainer +
                              "sweep:\n  method: tpe\n  max_trials: 5\n  metric: {name: score}\n"
                              "  parameters:\n    lr: {distribution: log_uniform_values, min: 0.1, "
                              "max: 0.01}\n");
  EXPECT_TRUE(has_line(lines,
                       "t.yaml:7:59: key 'sweep.parameters.lr.max': must be >= min (0.1), "
                       "got 0.01"))
      << joined(lines);
}

TEST(TpeConfig, ProbabilitiesThatDoNotSumToOneAreAnError) {
  const auto lines =
      problems(kTrainer +
               "sweep:\n  method: tpe\n  max_trials: 5\n  metric: {name: score}\n"
               "  parameters:\n    act: {values: [a, b], probabilities: [0.5, 0.4]}\n");
  EXPECT_TRUE(has_line(lines,
                       "t.yaml:7:42: key 'sweep.parameters.act.probabilities': must sum "
                       "to 1, got 0.9"))
      << joined(lines);
}

TEST(TpeConfig, BayesIsReadAsTpe) {
  const config::SweepConfig config = load_sweep(
      "  method: bayes\n  max_trials: 12\n  repeats: 2\n  parameters:\n"
      "    x: {min: 0.0, max: 1.0}\n");
  EXPECT_EQ(config.sweep.method, "tpe");
  EXPECT_EQ(config.sweep.method_as_written, "bayes");
  EXPECT_EQ(config.trial_count(), 24u);
  EXPECT_EQ(config.shape(),
            "tpe for bayes, each suggested from the results before it, 2 repeats each");
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  EXPECT_NE(dynamic_cast<TpeSampler*>(sampler.get()), nullptr);
  EXPECT_EQ(sampler->capacity(), 24u);
}

TEST(TpeConfig, MakeSamplerPicksTheMethod) {
  const std::string x = "  parameters:\n    x: {values: [1, 2]}\n";
  EXPECT_NE(
      dynamic_cast<GridRandomSampler*>(make_sampler(load_sweep("  method: grid\n" + x)).get()),
      nullptr);
  EXPECT_NE(dynamic_cast<GridRandomSampler*>(
                make_sampler(load_sweep("  method: random\n  max_trials: 3\n" + x)).get()),
            nullptr);
  EXPECT_NE(dynamic_cast<TpeSampler*>(
                make_sampler(load_sweep("  method: tpe\n  max_trials: 3\n" + x)).get()),
            nullptr);
}

TEST(TpeConfig, TpeTrialsAreFilledAsTrialPointFillsThem) {
  // The start-up's suggestions are random search's draws, so there the tpe sampler and
  // trial_point must give the same trials to the letter: values, texts, places, seeds.
  const config::SweepConfig config = config::load_config_text(
      "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
      "model: {preset: mlp, hidden: [16]}\n"
      "training: {epochs: 1, batch_size: 16, seed: 17}\n"
      "sweep:\n  method: tpe\n  max_trials: 8\n  repeats: 2\n  seed: 3\n  parameters:\n"
      "    training.learning_rate: {distribution: log_uniform_values, min: 1e-4, max: 0.1}\n"
      "    training.optimizer: {values: [sgd, adam]}\n"
      "    training.batch_size: {distribution: q_uniform, min: 8, max: 64, q: 8}\n",
      "t.yaml");
  const std::unique_ptr<Sampler> sampler = make_sampler(config);
  for (std::uint64_t i = 0; i < 16; ++i) {
    const std::optional<config::TrialPoint> point = sampler->ask();
    ASSERT_TRUE(point);
    const config::TrialPoint want = config::trial_point(config, i);
    EXPECT_EQ(point->number, want.number);
    EXPECT_EQ(point->repeat, want.repeat);
    EXPECT_EQ(point->seed, want.seed);
    EXPECT_EQ(point->seed, 17u + i % 2);
    EXPECT_EQ(point->params.dump(), want.params.dump());
    EXPECT_EQ(point->texts, want.texts);
    for (std::size_t p = 0; p < want.where.size(); ++p) {
      EXPECT_EQ(point->where[p].line, want.where[p].line);
      EXPECT_EQ(point->where[p].column, want.where[p].column);
      EXPECT_EQ(point->where[p].drawn, want.where[p].drawn);
    }
    // Nothing told: the whole sweep stays in the start-up.
  }
  EXPECT_FALSE(sampler->ask());
}

TEST(TpeConfig, TpeTrialsAreCheckedAsRandomSearchsAre) {
  // A drawn batch size of 0 is reported at the parameter, as for random search.
  const std::string base =
      "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
      "model: {preset: mlp, hidden: [16]}\n"
      "training: {epochs: 1, batch_size: 16}\n"
      "sweep:\n  max_trials: 30\n  parameters:\n"
      "    training.batch_size: {distribution: int_uniform, min: 0, max: 3}\n";
  const auto tpe = problems(base + "  method: tpe\n");
  const auto random = problems(base + "  method: random\n");
  EXPECT_FALSE(tpe.empty());
  EXPECT_EQ(tpe, random);
}

}  // namespace
}  // namespace sweep::search::testing
