// Configs a careless or hostile user gives: nonsense that must be refused with one FILE:LINE:COL
// line (never a default run, never a crash), inputs that must not take unbounded memory or time
// (alias bombs, /dev/zero, grids of 10^7 and 10^12 points), and values that must reach an
// external command spelled exactly as written.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config_test_util.h"
#include "sweep/config/yaml_guard.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;

bool has_line(const std::vector<std::string>& lines, const std::string& expected) {
  return std::find(lines.begin(), lines.end(), expected) != lines.end();
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& line : lines) all += "  " + line + "\n";
  return all.empty() ? "  (it loaded)\n" : all;
}

struct Hostile {
  const char* what;
  std::string yaml;
  std::vector<std::string> sets;
  std::string expected;  // one of the problem lines, exactly
};

// 10 values per parameter, `params` parameters: a grid of 10^params points. The keys are never
// read: a sweep over the limit is refused before any trial is resolved.
std::string grid_of(int params) {
  std::string yaml = std::string(kSyntheticBase) + "sweep:\n  parameters:\n";
  for (int i = 0; i < params; ++i)
    yaml += "    training.p" + std::to_string(i) + ": {values: [1,2,3,4,5,6,7,8,9,10]}\n";
  return yaml;
}

// A "billion laughs": each level is a list of ten aliases of the level before.
std::string alias_bomb(int levels) {
  std::ostringstream yaml;
  yaml << "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < levels; ++i) {
    yaml << "a" << i << ": &a" << i << " [";
    for (int k = 0; k < 10; ++k) yaml << (k ? ", " : "") << "*a" << i - 1;
    yaml << "]\n";
  }
  yaml << "sweep: {parameters: {training.epochs: {values: *a" << levels - 1 << "}}}\n";
  return yaml.str();
}

std::vector<Hostile> hostile_configs() {
  const std::string base = kSyntheticBase;
  return {
      {"empty file",
       "",
       {},
       "t.yaml: the config is empty (no YAML besides comments): it needs at least the sections "
       "it changes, such as sweep: {parameters: ...} (see configs/quickstart.yaml)"},
      {"comments only",
       "# a sweep\n   # nothing else\n",
       {},
       "t.yaml: the config is empty (no YAML besides comments): it needs at least the sections "
       "it changes, such as sweep: {parameters: ...} (see configs/quickstart.yaml)"},
      {"duplicate top-level key",
       base + "training: {epochs: 2}\n",
       {},
       "t.yaml:4:1: key 'training' appears twice in this map (first at line 3): remove one"},
      {"duplicate nested key",
       "training:\n  epochs: 1\n  epochs: 2\n",
       {},
       "t.yaml:3:3: key 'epochs' appears twice in this map (first at line 2): remove one"},
      {"second document",
       base + "---\nname: other\n",
       {},
       "t.yaml:4:1: a config is one YAML document, but a second one starts here ('---'): put "
       "everything in one, or split it into two files"},
      {"unknown tag",
       "training: !foo {epochs: 1}\n",
       {},
       "t.yaml:1:11: unknown tag '!foo': a config uses plain YAML values (quote the text if the "
       "'!' is part of it)"},
      {"NUL byte",
       std::string("training: {epochs: 1}\n\0\n", 24),
       {},
       "t.yaml: the file holds a NUL byte (at byte 23): it is not a text file, so not a YAML "
       "config"},
      {"alias bomb",
       alias_bomb(9),
       {},
       "t.yaml:6:15: the YAML expands to more than 250000 values once its aliases (*name) are "
       "expanded; a config needs far fewer (aliases that nest aliases grow exponentially)"},
      {"unbalanced quote in the trainer command",
       "trainer: {command: \"python3 'train.py --lr {lr}\"}\nsweep: {parameters: {lr: {values: "
       "[1]}}}\n",
       {},
       "t.yaml:1:20: key 'trainer.command': command: unterminated ' quote in: python3 'train.py "
       "--lr {lr}"},
      {"empty name",
       base + "name: ''\n",
       {},
       "t.yaml:4:7: key 'name': the name is empty: it names the directory runs/NAME/"},
      {"a section set to null",
       base,
       {"training=null"},
       "--set training=null: key 'training': cannot set a section or list to null: set its keys "
       "instead, such as --set training.KEY=VALUE"},
      {"a tag in a --set value",
       base,
       {"training.epochs=!int 3"},
       "--set training.epochs=!int 3: key 'training.epochs': unknown tag '!int': a config uses "
       "plain YAML values (quote the text if the '!' is part of it)"},
      {"a grid of 10^7 trials",
       grid_of(7),
       {},
       "t.yaml:6:5: key 'sweep.parameters': the sweep has 10000000 trials (grid 10 × 10 × 10 × 10 "
       "× 10 × 10 × 10), more than the 100000 one sweep may hold: set sweep.max_trials to run the "
       "first N, sample with method: random and max_trials, or split the sweep"},
      {"a grid of 10^12 trials",
       grid_of(12),
       {},
       "t.yaml:6:5: key 'sweep.parameters': the sweep has 1000000000000 trials (grid 10 × 10 × 10 "
       "× 10 × 10 × 10 × 10 × 10 × 10 × 10 × 10 × 10), more than the 100000 one sweep may hold: "
       "set sweep.max_trials to run the first N, sample with method: random and max_trials, or "
       "split the sweep"},
      {"a billion repeats",
       base + "sweep: {repeats: 1000000000, parameters: {training.epochs: {values: [1, 2]}}}\n",
       {},
       "t.yaml:4:42: key 'sweep.parameters': the sweep has 2000000000 trials (grid 2, 1000000000 "
       "repeats each), more than the 100000 one sweep may hold: set sweep.max_trials to run the "
       "first N, sample with method: random and max_trials, or split the sweep"},
      {"a random search of 10^12 trials",
       base + "sweep: {method: random, max_trials: 1000000000000,\n"
              "        parameters: {training.learning_rate: {min: 0.001, max: 0.1}}}\n",
       {},
       "t.yaml:4:37: key 'sweep.max_trials': the sweep has 1000000000000 trials (random, "
       "1000000000000 samples), more than the 100000 one sweep may hold: ask for fewer"},
  };
}

TEST(HostileConfigs, EachIsRefusedWithItsLine) {
  for (const Hostile& c : hostile_configs()) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<std::string> lines = problems(c.yaml, c.sets);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(has_line(lines, c.expected))
        << c.what << ": expected\n  " << c.expected << "\ngot\n"
        << joined(lines);
    // Not a benchmark: a bound far above what these take within the limits, far below the
    // minutes (or the gigabytes) they would take without them.
    EXPECT_LT(seconds, 10.0) << c.what;
  }
}

TEST(HostileConfigs, FilesThatAreNotConfigs) {
  const fs::path dir = fs::temp_directory_path() / ("sweep_hostile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto expect_refused = [](const std::string& path, const std::string& expected) {
    try {
      load_config(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const ConfigError& e) {
      EXPECT_TRUE(has_line(e.messages(), expected)) << joined(e.messages());
    }
  };
  expect_refused(dir.string(), dir.string() +
                                   ": is a directory, not a config file (give a .yaml file, such "
                                   "as configs/quickstart.yaml)");
  expect_refused((dir / "missing.yaml").string(),
                 (dir / "missing.yaml").string() + ": no such file");
  // /dev/zero never ends: read at most one byte past the limit.
  expect_refused("/dev/zero",
                 "/dev/zero: the file is larger than 1 MiB; a sweep config is a few KiB of YAML "
                 "(is this the right file?)");
  fs::remove_all(dir);
}

// Found by the config fuzzer: a parameter name with a byte that is not UTF-8 reached the JSON
// writer, which threw an exception nobody caught. The file is refused at that byte instead, and
// so is such a --set.
TEST(HostileConfigs, BytesThatAreNotUtf8AreRefusedWhereTheyAre) {
  const std::string latin1 = "sweep:\n  parameters:\n    caf\xe9: {values: [1, 2]}\n";
  const std::vector<std::string> lines = problems(latin1);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_EQ(lines[0],
            "t.yaml:3:8: byte 0xE9 is not UTF-8 text: a YAML config is UTF-8 (was the file saved "
            "in another encoding?)");
  // Valid UTF-8 passes (a two-, three- and four-byte letter), overlong and surrogate forms do not.
  EXPECT_EQ(invalid_utf8_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(invalid_utf8_at("a\xc0\xaf"
                            "b"),
            1u);
  EXPECT_EQ(invalid_utf8_at("ab\xed\xa0\x80"), 2u);
  EXPECT_EQ(invalid_utf8_at("\xf4\x90\x80\x80"), 0u);
  EXPECT_EQ(invalid_utf8_at("x\xe2\x82"), 1u);
  const std::vector<std::string> set = problems(kSyntheticBase, {"training.epochs=\xff"});
  ASSERT_EQ(set.size(), 1u) << joined(set);
  EXPECT_NE(set[0].find("is not UTF-8 text"), std::string::npos) << set[0];
  EXPECT_EQ(problems(kSyntheticBase, {"sweep.parameters.\xff=1"}).size(), 1u);
}

// Placeholders reach the command as the file spells the value (`010` stays 010, `.nan` stays
// .nan), not as a re-rendered number.
TEST(HostileConfigs, PlaceholderValuesKeepTheirSpelling) {
  const SweepConfig config = load_text(
      "trainer: {command: \"echo --x {x} --lr {training.learning_rate}\"}\n"
      "training: {learning_rate: 1e-3}\n"
      "sweep:\n"
      "  parameters:\n"
      "    x: {values: [nan, NaN, .nan, inf, 1e3, 010, 1.0, 0x1F, \"quoted\", [1, 2]]}\n");
  const std::vector<std::string> spelled = {"nan", "NaN", ".nan", "inf",    "1e3",
                                            "010", "1.0", "0x1F", "quoted", "[1, 2]"};
  ASSERT_EQ(config.trial_count(), spelled.size());
  for (std::size_t i = 0; i < spelled.size(); ++i) {
    const FilledCommand filled = fill_command(config, trial_point(config, i));
    EXPECT_EQ(filled.placeholders["x"], spelled[i]) << "trial " << i;
    EXPECT_EQ(filled.command, "echo --x " + spelled[i] + " --lr 1e-3") << "trial " << i;
    EXPECT_EQ(resolve_trial(config, i).placeholders["x"], spelled[i]) << "trial " << i;
  }
}

// nan and inf (any spelling from_chars reads as no finite number) are parameter values of their
// own, kept as the text they are: as JSON numbers they were null in the store, SWEEP_PARAMS and
// the exports, and trials of nan and inf looked alike.
TEST(HostileConfigs, NanAndInfParameterValuesStayTheTextTheyAre) {
  const SweepConfig config = load_text(
      "trainer: {command: \"echo {x}\"}\n"
      "sweep:\n"
      "  parameters:\n"
      "    x: {values: [nan, inf, -Infinity, .nan, 1e400, 0.5]}\n");
  const sweep::Json expected = {"nan", "inf", "-Infinity", ".nan", "1e400", 0.5};
  ASSERT_EQ(config.trial_count(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const sweep::Json params = trial_point(config, i).params;
    EXPECT_EQ(params.at("x"), expected[i]) << "trial " << i;
    EXPECT_EQ(params.dump().find("null"), std::string::npos) << params.dump();
  }
}

// A grid too big to check one trial at a time is still checked value by value: a bad value
// anywhere in the list is found, at its line, without resolving 10^5 trials.
TEST(HostileConfigs, ALargeGridIsCheckedValueByValue) {
  std::string yaml = std::string(kSyntheticBase) + "sweep:\n  parameters:\n";
  yaml += "    training.batch_size: {values: [";
  for (int i = 1; i <= 50; ++i) yaml += std::to_string(i == 37 ? 0 : i) + (i < 50 ? ", " : "");
  yaml += "]}\n    data.synthetic.seed: {values: [";
  for (int i = 1; i <= 1000; ++i) yaml += std::to_string(i) + (i < 1000 ? ", " : "");
  yaml += "]}\n";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> lines = problems(yaml);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("t.yaml:6:"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("key 'training.batch_size': must be >= 1, got 0"), std::string::npos)
      << lines[0];
  EXPECT_LT(seconds, 30.0);  // 50,000 trials; a few thousand are resolved, not all of them
}

// A config whose every trial has more problems than a user is shown: checking stops once the
// shown lines are full, instead of finding the same problems in 2,000 trials (the fuzzer found
// such a config taking 20 s; the count of lines not shown then ran to thousands of repeats).
TEST(HostileConfigs, MoreProblemsThanShownStopCheckingTheTrials) {
  std::string yaml =
      "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
      "training: {epochs: 1, batch_size: 16}\n"
      "model: {preset: mlp, hidden: [16]";
  for (int i = 0; i < 120; ++i) yaml += ", typo" + std::to_string(i) + ": 1";
  yaml += "}\nsweep:\n  parameters:\n    data.synthetic.seed: {values: [";
  for (int i = 1; i <= 2000; ++i) yaml += std::to_string(i) + (i < 2000 ? ", " : "");
  yaml += "]}\n";
  const std::vector<std::string> lines = problems(yaml);
  ASSERT_EQ(lines.size(), 101u) << joined(lines);
  EXPECT_NE(lines[0].find("key 'model.typo0': unknown key"), std::string::npos) << lines[0];
  const std::string& last = lines.back();
  ASSERT_EQ(last.rfind("... and ", 0), 0u) << last;
  const int not_shown = std::stoi(last.substr(8));
  EXPECT_GT(not_shown, 0) << last;
  EXPECT_LE(not_shown, 20) << last << ": the same problems were counted once per trial";
}

}  // namespace
}  // namespace sweep::config::testing
