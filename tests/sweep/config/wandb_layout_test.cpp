// W&B sweep files as W&B writes them (top-level method, metric, parameters, early_terminate,
// run_cap, program, command with W&B's macros), W&B's flat parameter names in a built-in trainer's
// config, and the guards around W&B's log_uniform (exponents) against Ray's/Optuna's loguniform
// (values).
#include <gmock/gmock.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "config_test_util.h"

namespace sweep::config::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// A W&B file as `wandb sweep` takes it (the program need not exist for a python3 script check:
// the tests run from the source tree, and python/sweep_trial.py is a real file there).
const std::string kWandbFile =
    "program: python/sweep_trial.py\n"
    "method: random\n"
    "metric: {name: val_loss, goal: minimize}\n"
    "run_cap: 4\n"
    "parameters:\n"
    "  learning_rate: {distribution: log_uniform_values, min: 1.0e-4, max: 0.1}\n"
    "  batch_size: {values: [32, 64]}\n"
    "early_terminate: {type: hyperband, min_iter: 3, strict: true}\n";

std::vector<std::string> argv_of(const TrialPlan& plan) {
  std::vector<std::string> words;
  std::string word;
  for (char c : plan.command) {
    if (c == ' ') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

TEST(WandbFile, LoadsAsAnExternalCommandSweepWithWandbsDefaultCommand) {
  const SweepConfig config = load_text(kWandbFile);
  ASSERT_TRUE(config.trainer.has_value());
  EXPECT_EQ(config.sweep.method, "random");
  EXPECT_EQ(config.sweep.max_trials, 4);  // run_cap
  EXPECT_EQ(config.trial_count(), 4u);
  EXPECT_EQ(config.sweep.metric.name, "val_loss");
  EXPECT_FALSE(config.sweep.metric.maximize());
  ASSERT_TRUE(config.sweep.early_terminate.has_value());
  EXPECT_EQ(config.sweep.early_terminate->policy.at("strict"), true);
  EXPECT_TRUE(config.warnings.empty()) << ::testing::PrintToString(config.warnings);
  // [${env}, ${interpreter}, ${program}, ${args}]
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 4u);
  const std::vector<std::string> argv = argv_of(trials[0]);
  ASSERT_EQ(argv.size(), 5u) << trials[0].command;
  EXPECT_EQ(argv[0], "/usr/bin/env");
  EXPECT_EQ(argv[1], "python3");
  EXPECT_EQ(argv[2], "python/sweep_trial.py");
  EXPECT_EQ(argv[3].rfind("--learning_rate=", 0), 0u) << argv[3];
  EXPECT_TRUE(argv[4] == "--batch_size=32" || argv[4] == "--batch_size=64") << argv[4];
}

TEST(WandbFile, MacrosKeepWandbsMeanings) {
  const SweepConfig config = load_text(
      "program: python/sweep_trial.py\n"
      "method: grid\n"
      "metric: {name: acc, goal: maximize}\n"
      "parameters:\n"
      "  lr: {values: [0.5]}\n"
      "  opt: {parameters: {momentum: {values: [0.9]}}}\n"
      "command:\n  - ${env}\n  - ${interpreter}\n  - ${program}\n  - --epochs=5\n"
      "  - ${args_no_hyphens}\n  - ${args_json}\n");
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].params.dump(), R"({"lr":0.5,"opt.momentum":0.9})");
  const std::vector<std::string> argv = argv_of(trials[0]);
  ASSERT_GE(argv.size(), 6u) << trials[0].command;
  EXPECT_EQ(argv[3], "--epochs=5");
  EXPECT_EQ(argv[4], "lr=0.5");
  EXPECT_EQ(argv[5], "opt.momentum=0.9");
  EXPECT_EQ(trials[0].placeholders.at("args_json"), R"({"lr":0.5,"opt.momentum":0.9})");
}

TEST(WandbFile, MistakesAndUnsupportedKeysAreClearErrors) {
  const std::string params = "parameters: {lr: {values: [0.1]}}\n";
  // Mixed layouts: one error per top-level sweep key, nothing else (program still reads).
  EXPECT_EQ(problems("program: python/sweep_trial.py\nmethod: random\nrun_cap: 3\n"
                     "sweep: {max_trials: 3, parameters: {lr: {values: [0.1]}}}\n"),
            (std::vector<std::string>{
                "t.yaml:2:9: key 'method': W&B's top-level sweep keys and a sweep: section cannot "
                "be mixed: move it under sweep:, or the sweep: section's keys to the top level",
                "t.yaml:3:10: key 'run_cap': W&B's top-level sweep keys and a sweep: section "
                "cannot be mixed: move it under sweep:, or the sweep: section's keys to the top "
                "level"}));
  EXPECT_THAT(
      problems("program: python/sweep_trial.py\nmethod: grid\nmetrics: [{name: a}]\n" + params),
      Contains(HasSubstr("key 'metrics': multi-objective sweeps")));
  EXPECT_THAT(problems("program: python/sweep_trial.py\nmethod: grid\n" + params +
                       "command:\n  - ${env}\n  - ${interpeter}\n  - ${program}\n"),
              Contains(HasSubstr("unknown macro ${interpeter} (did you mean 'interpreter'?)")));
  EXPECT_THAT(problems("program: python/sweep_trial.py\nmethod: grid\n" + params +
                       "command:\n  - ${program}\n  - ${args_json_file}\n"),
              Contains(HasSubstr("${args_json_file} is not supported: use ${args_json}")));
  EXPECT_THAT(problems("program: python/sweep_trial.py\nmethod: random\n" + params +
                       "run_cap: 3\nsweep_max: 1\n"),
              Contains(HasSubstr("key 'sweep_max': unknown key")));
}

TEST(WandbFile, ServiceKeysAndAMissingGoalAreWarningsNotErrors) {
  const SweepConfig config = load_text(
      "project: mnist\nentity: me\nprogram: python/sweep_trial.py\nmethod: grid\n"
      "metric: {name: accuracy}\nparameters: {lr: {values: [0.1]}}\n");
  EXPECT_THAT(config.warnings,
              Contains("t.yaml:1:10: warning: key 'project': used by W&B's service only; "
                       "ignored here"));
  EXPECT_THAT(config.warnings, Contains(HasSubstr("no goal: W&B would minimize accuracy")));
  EXPECT_TRUE(config.sweep.metric.maximize());
}

TEST(WandbFile, AScriptThatIsNotThereIsRefusedBeforeAnythingRuns) {
  const std::vector<std::string> lines =
      problems("program: no_such_train.py\nmethod: grid\nparameters: {lr: {values: [0.1]}}\n");
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines.front(), HasSubstr("no_such_train.py"));
  EXPECT_THAT(lines.front(), HasSubstr(std::filesystem::current_path().string()));
}

TEST(WandbFile, AProgramWithoutParametersLoads) {
  // Found by the config fuzzer: the command template read an absent parameters block.
  // Nothing swept is a grid of one trial, run with W&B's default command.
  const SweepConfig config =
      load_text("method: grid\nprogram: python/sweep_trial.py\nmetric: {name: loss}\n");
  ASSERT_TRUE(config.trainer.has_value());
  EXPECT_THAT(config.trainer->command, HasSubstr("python/sweep_trial.py"));
}

// ---- the external-command check, for any sweep -------------------------------------------------

TEST(CommandCheck, ProgramsAndScriptsMustBeWhereTheCommandSays) {
  auto first = [](const std::string& command) {
    const std::vector<std::string> lines =
        problems("trainer: {command: \"" + command + "\"}\nsweep: {metric: {name: s}}\n");
    return lines.empty() ? std::string("loaded") : lines.front();
  };
  EXPECT_EQ(first("echo {trial}"), "loaded");
  EXPECT_EQ(first("python3 -c 'print(1)'"), "loaded");                  // no script file
  EXPECT_EQ(first("env X=1 python3 python/sweep_trial.py"), "loaded");  // env, then the script
  EXPECT_THAT(first("no-such-program-xyz --lr 1"),
              HasSubstr("program 'no-such-program-xyz' is not on PATH"));
  EXPECT_THAT(first("python3 train_missing.py"), HasSubstr("train_missing.py"));
  EXPECT_THAT(first("python3 train_missing.py"),
              HasSubstr(std::filesystem::current_path().string()));
}

// ---- flat W&B names in a built-in trainer's config ---------------------------------------------

TEST(FlatNames, MapToTheOneConfigKeyTheyName) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                       "sweep:\n  parameters:\n"
                                       "    learning_rate: {values: [0.1, 0.2]}\n"
                                       "    seed: {values: [1, 2]}\n");
  ASSERT_EQ(config.sweep.space.params.size(), 2u);
  EXPECT_EQ(config.sweep.space.params[0].name, "training.learning_rate");
  EXPECT_EQ(config.sweep.space.params[1].name, "training.seed");  // not data.synthetic.seed
  const std::vector<TrialPlan> trials = expand(config);
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_DOUBLE_EQ(trials[3].config.training.learning_rate, 0.2);
  EXPECT_EQ(trials[3].config.training.seed, 2u);
}

TEST(FlatNames, AnUnknownFlatNameIsAnErrorWithASuggestion) {
  EXPECT_THAT(problems(std::string(kSyntheticBase) +
                       "sweep:\n  parameters:\n    learnig_rate: {values: [0.1]}\n"),
              Contains(HasSubstr("learning_rate")));
}

// ---- log_uniform (exponents) vs loguniform (values) --------------------------------------------

TEST(LogUniform, BoundsThatLookLikeValuesGetAWarningNamingLogUniformValues) {
  const SweepConfig config =
      load_text(std::string(kSyntheticBase) +
                "sweep:\n  method: random\n  max_trials: 2\n  parameters:\n"
                "    training.learning_rate: {distribution: log_uniform, min: 0.0001, max: 0.1}\n");
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_THAT(config.warnings[0], HasSubstr("log_uniform_values"));
  EXPECT_THAT(config.warnings[0], HasSubstr("t.yaml:8:62: warning:"));
  // Exponents are fine: no warning.
  EXPECT_TRUE(load_text(std::string(kSyntheticBase) +
                        "sweep:\n  method: random\n  max_trials: 2\n  parameters:\n"
                        "    training.learning_rate: {distribution: log_uniform, min: -9.2, "
                        "max: -2.3}\n")
                  .warnings.empty());
}

TEST(LogUniform, RaysAndOptunasSpellingIsRefusedNotReadAsExponents) {
  for (const char* spelling : {"loguniform", "qloguniform", "reciprocal"})
    EXPECT_THAT(problems(std::string(kSyntheticBase) +
                         "sweep:\n  method: random\n  max_trials: 2\n  parameters:\n"
                         "    training.learning_rate: {distribution: " +
                         spelling + ", min: 0.0001, max: 0.1}\n"),
                Contains(HasSubstr("log_uniform_values")))
        << spelling;
}

}  // namespace
}  // namespace sweep::config::testing
