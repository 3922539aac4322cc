// --set KEY=VALUE: applied to the YAML tree before validation, values parsed as YAML, problems
// reported as the --set argument.
#include "config_test_util.h"

namespace sweep::config::testing {
namespace {

TEST(Overrides, ScalarsListsAndMapsAreYaml) {
  const SweepConfig config = load_text(
      kSyntheticBase, {"training.epochs=3", "model.hidden=[32, 8]",
                       "data.augment={flip: true, translate: 2}", "training.optimizer=adam"});
  EXPECT_EQ(config.base.training.epochs, 3);
  EXPECT_EQ(config.base.model.hidden, (std::vector<int>{32, 8}));
  EXPECT_TRUE(config.base.data.augment.flip);
  EXPECT_EQ(config.base.data.augment.translate, 2);
  EXPECT_EQ(config.base.training.optimizer, trainer::OptimizerKind::adam);
}

TEST(Overrides, LaterSetsWinAndCreateMissingSections) {
  const SweepConfig config =
      load_text("data: {dataset: synthetic}\n",
                {"training.schedule.type=cosine", "training.learning_rate=0.5",
                 "training.learning_rate=0.25"});
  EXPECT_EQ(config.base.training.schedule.type, trainer::ScheduleType::cosine);
  EXPECT_EQ(config.base.training.learning_rate, 0.25);
}

TEST(Overrides, ReplaceAnAliasWrittenInTheFile) {
  const SweepConfig config = load_text("data: {dataset: synthetic}\ntraining: {base_lr: 0.3}\n",
                                       {"training.learning_rate=0.2"});
  EXPECT_EQ(config.base.training.learning_rate, 0.2);
}

TEST(Overrides, CanChangeTheSweepItself) {
  const SweepConfig config = load_text(std::string(kSyntheticBase) +
                                           "sweep:\n  parameters:\n"
                                           "    training.batch_size: {values: [8, 16, 32]}\n",
                                       {"sweep.parameters={training.batch_size: {values: [4, 8]}}",
                                        "sweep.repeats=2", "name=short"});
  EXPECT_EQ(config.name, "short");
  EXPECT_EQ(config.sweep.repeats, 2);
  EXPECT_EQ(config.trial_count(), 4u);
  EXPECT_EQ(expand(config).back().config.training.batch_size, 8);
}

// A parameter's name is a dotted key: --set reaches into one by its name (it split the name at
// its dots and reported 'sweep.parameters.training' as a parameter without a distribution).
TEST(Overrides, ReachIntoASweptParameterByItsDottedName) {
  const std::string swept = std::string(kSyntheticBase) +
                            "sweep:\n  parameters:\n"
                            "    training.batch_size: {values: [8, 16, 32]}\n";
  SweepConfig config = load_text(swept, {"sweep.parameters.training.batch_size.values=[4, 8]"});
  EXPECT_EQ(config.trial_count(), 2u);
  EXPECT_EQ(expand(config).back().config.training.batch_size, 8);
  // A parameter the file does not sweep: the parts before a spec key (values) name it.
  config = load_text(swept, {"sweep.parameters.training.momentum.values=[0.5, 0.9]"});
  EXPECT_EQ(config.trial_count(), 6u);
  EXPECT_EQ(expand(config).back().config.training.momentum, 0.9);
  config = load_text(swept, {"sweep.parameters.training.momentum={values: [0.1]}"});
  EXPECT_EQ(expand(config).back().config.training.momentum, 0.1);
}

TEST(Overrides, BadValuesAreReportedAsTheSetArgument) {
  const auto lines = problems(kSyntheticBase, {"training.epochs=0", "training.momentum=[1",
                                               "noequals", "training.epochs.x=1"});
  ASSERT_EQ(lines.size(), 4u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0],
            "--set training.momentum=[1: key 'training.momentum': the value is not "
            "valid YAML: end of sequence flow not found");
  EXPECT_EQ(lines[1], "--set noequals: expected KEY=VALUE, such as training.epochs=2");
  EXPECT_EQ(lines[2],
            "--set training.epochs.x=1: key 'training.epochs.x': 'training.epochs' "
            "holds a value, not a section: 'training.epochs.x' cannot be set");
  EXPECT_EQ(lines[3], "--set training.epochs=0: key 'training.epochs': must be >= 1, got 0");
}

TEST(Overrides, UnknownKeySuggestsTheNearestField) {
  const auto lines = problems(kSyntheticBase, {"training.learning_rte=0.1"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "--set training.learning_rte=0.1: key 'training.learning_rte': unknown "
            "key, did you mean 'learning_rate'?");
}

// A key that only an override made is reported at the override, not as the file's (the file has
// no such key, nor a line for it).
TEST(Overrides, AnUnknownKeyMadeByAnOverrideIsTheOverrides) {
  auto lines = problems(kSyntheticBase, {"a.b.c=1"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("--set a.b.c=1: key 'a': unknown key", 0), 0u) << lines[0];
  lines = problems(kSyntheticBase, {"training.x.y=1"});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("--set training.x.y=1: key 'training.x': unknown key", 0), 0u)
      << lines[0];
}

// A flag's value (--name, --out) is text, whatever YAML would make of it.
TEST(Overrides, AFlagsValueIsTextWhateverYamlWouldMakeOfIt) {
  for (const std::string dir : {"/tmp/runs: old", "[x]", "{a: 1}", "null", "a\"b\\c", "- x", "#x"})
    EXPECT_EQ(load_text(kSyntheticBase, {flag_override("--out", dir)}).output_dir, dir);
  // Empty is still empty text (and refused as a directory), not null.
  const auto lines = problems(kSyntheticBase, {flag_override("--out", "")});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("the directory is empty"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace sweep::config::testing
