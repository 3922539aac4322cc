// Trial expansion: grid size and order, random reproducibility, repeats, caps, and that every
// swept value lands in the trial's TrainConfig and resolved YAML.
#include <set>

#include "common/format.h"
#include "config_test_util.h"

namespace sweep::config::testing {
namespace {

TEST(Expand, GridIsTheCartesianProductLastParameterFastest) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                       "sweep:\n"
                                       "  parameters:\n"
                                       "    training.learning_rate: {values: [0.001, 0.01, 0.1]}\n"
                                       "    training.batch_size: {values: [8, 16]}\n");
  EXPECT_EQ(config.trial_count(), 6u);
  EXPECT_EQ(config.shape(), "grid 3 × 2");
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 6u);
  const double lrs[] = {0.001, 0.001, 0.01, 0.01, 0.1, 0.1};
  const int batches[] = {8, 16, 8, 16, 8, 16};
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i].number, static_cast<int>(i));
    EXPECT_DOUBLE_EQ(trials[i].config.training.learning_rate, lrs[i]);
    EXPECT_EQ(trials[i].config.training.batch_size, batches[i]);
    EXPECT_DOUBLE_EQ(trials[i].params["training.learning_rate"].get<double>(), lrs[i]);
    EXPECT_EQ(trials[i].params["training.batch_size"].get<int>(), batches[i]);
  }
  EXPECT_EQ(sweep::params_text(trials[0].params),
            "training.learning_rate=0.001 training.batch_size=8");
  // The params keep the file's order, not alphabetical order.
  EXPECT_EQ(trials[0].params.begin().key(), "training.learning_rate");
}

TEST(Expand, NoParametersIsOneTrialOfTheBaseConfig) {
  const SweepConfig config = load_text(kSyntheticBase);
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_TRUE(trials[0].params.empty());
  EXPECT_EQ(trials[0].config.training.batch_size, 16);
  EXPECT_EQ(config.shape(), "grid 1");
}

TEST(Expand, GridMaxTrialsCapsTheList) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                       "sweep:\n  max_trials: 4\n  parameters:\n"
                                       "    training.batch_size: {values: [1, 2, 3, 4, 5, 6]}\n");
  EXPECT_EQ(config.trial_count(), 4u);
  EXPECT_EQ(config.shape(), "grid 6, first 4");
  EXPECT_EQ(expand(config).back().config.training.batch_size, 4);
}

// max_trials counts points, whatever the method: a grid's first points each run all their
// repeats, as a random sweep's samples do (it cut the third point's repeats off).
TEST(Expand, GridMaxTrialsCountsPointsEachWithItsRepeats) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                       "sweep:\n  max_trials: 3\n  repeats: 2\n  parameters:\n"
                                       "    training.batch_size: {values: [1, 2, 3, 4, 5, 6]}\n");
  EXPECT_EQ(config.trial_count(), 6u);
  EXPECT_EQ(config.shape(), "grid 6, 2 repeats each, first 3 points");
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(trials[4].config.training.batch_size, 3);
  EXPECT_EQ(trials[5].config.training.batch_size, 3);
  EXPECT_EQ(trials[5].repeat, 1);
}

TEST(Expand, RepeatsTrainEachPointWithSeedPlusRepeat) {
  const SweepConfig config = load_text(
      "data: {dataset: synthetic}\n"
      "training: {epochs: 1, batch_size: 16, seed: 10}\n"
      "sweep:\n  repeats: 3\n  parameters:\n"
      "    training.learning_rate: {values: [0.1, 0.2]}\n");
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_EQ(config.shape(), "grid 2, 3 repeats each");
  for (std::size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i].repeat, static_cast<int>(i % 3));
    EXPECT_EQ(trials[i].seed, 10u + i % 3);
    EXPECT_EQ(trials[i].config.training.seed, trials[i].seed);
    EXPECT_DOUBLE_EQ(trials[i].config.training.learning_rate, i < 3 ? 0.1 : 0.2);
  }
  EXPECT_NE(trials[1].resolved_yaml.find("seed: 11"), std::string::npos);
}

TEST(Expand, RandomIsReproducibleAndDependsOnTheSeed) {
  const std::string yaml = std::string(kSyntheticBase) +
                           "sweep:\n  method: random\n  max_trials: 8\n  seed: 3\n"
                           "  parameters:\n"
                           "    training.learning_rate: {distribution: log_uniform_values, "
                           "min: 0.0001, max: 0.1}\n"
                           "    training.batch_size: {values: [8, 16, 32]}\n";
  const auto first = expand(load_text(yaml));
  const auto again = expand(load_text(yaml));
  ASSERT_EQ(first.size(), 8u);
  std::set<double> distinct;
  for (std::size_t i = 0; i < first.size(); ++i) {
    EXPECT_EQ(first[i].params, again[i].params);
    distinct.insert(first[i].config.training.learning_rate);
  }
  EXPECT_EQ(distinct.size(), 8u);
  const auto other = expand(load_text(yaml, {"sweep.seed=4"}));
  EXPECT_NE(first[0].params, other[0].params);
  // Trial k's draws do not depend on how many trials there are.
  const auto more = expand(load_text(yaml, {"sweep.max_trials=20"}));
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].params, more[i].params);
}

TEST(Expand, AnyKeyCanBeSweptIncludingNestedAndListItems) {
  const SweepConfig config = load_text(
      "data: {dataset: synthetic}\n"
      "model:\n  layers:\n    - conv: {filters: 4, kernel: 3}\n    - relu\n    - dense: 10\n"
      "sweep:\n  parameters:\n"
      "    data.augment.flip: {values: [false, true]}\n"
      "    model.layers.0.conv.filters: {values: [4, 8]}\n"
      "    training.schedule.type: {value: cosine}\n");
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_FALSE(trials[0].config.data.augment.flip);
  EXPECT_TRUE(trials[3].config.data.augment.flip);
  EXPECT_EQ(trials[1].config.model.layers[0].num.at("filters"), 8.0);
  EXPECT_EQ(trials[1].config.model.layers[0].num.at("kernel"), 3.0);
  EXPECT_EQ(trials[2].config.training.schedule.type, trainer::ScheduleType::cosine);
  EXPECT_EQ(config.base.model.preset, trainer::Preset::none);
}

TEST(Expand, ResolvedYamlReloadsToTheSameTrainConfig) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                       "sweep:\n  parameters:\n"
                                       "    training.learning_rate: {values: [0.03]}\n"
                                       "    model.dropout: {values: [0.25]}\n");
  const TrialPlan trial = expand(config).front();
  const SweepConfig reloaded = load_config_text(trial.resolved_yaml, "resolved.yaml");
  const trainer::TrainConfig& a = trial.config;
  const trainer::TrainConfig& b = reloaded.base;
  EXPECT_EQ(b.training.learning_rate, a.training.learning_rate);
  EXPECT_EQ(b.model.dropout, 0.25);
  EXPECT_EQ(b.model.hidden, a.model.hidden);
  EXPECT_EQ(b.data.synthetic.train_size, a.data.synthetic.train_size);
  EXPECT_EQ(b.training.schedule.type, a.training.schedule.type);
  EXPECT_EQ(expand(reloaded).front().resolved_yaml, trial.resolved_yaml);
}

TEST(Expand, ExternalCommandPlaceholdersAreFilledPerTrial) {
  const SweepConfig config = load_text(
      "trainer: {command: \"echo --lr {lr} --bs {training.batch_size} --t {trial} "
      "--s {seed} --out {trial_dir} {{x}}\"}\n"
      "training: {batch_size: 32}\n"
      "sweep:\n  metric: {name: score}\n  parameters:\n    lr: {values: [0.5, 1]}\n");
  const auto trials = expand(config);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].command, "echo --lr 0.5 --bs 32 --t 0 --s 1 --out {trial_dir} {x}");
  EXPECT_EQ(trials[1].command, "echo --lr 1 --bs 32 --t 1 --s 1 --out {trial_dir} {x}");
  EXPECT_EQ(trials[1].placeholders["lr"], "1");
  EXPECT_EQ(trials[1].placeholders["training.batch_size"], "32");
  EXPECT_EQ(trials[1].placeholders["trial"], "1");
  EXPECT_FALSE(trials[1].placeholders.contains("trial_dir"));
  EXPECT_EQ(config.sweep.metric.goal, "maximize");
}

}  // namespace
}  // namespace sweep::config::testing
