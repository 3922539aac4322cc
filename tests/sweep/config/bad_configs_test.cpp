// A table of bad configs, each with the exact line it must produce (FILE:LINE:COL: key: text).
// Every message names the place to fix; a config with several problems reports all of them.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/format.h"
#include "config_test_util.h"
#include "trainer/config_keys.h"

namespace sweep::config::testing {
namespace {

struct BadConfig {
  const char* what;
  std::string yaml;
  std::string expected;  // one of the problem lines, exactly
};

const std::string kBase = kSyntheticBase;

std::vector<BadConfig> bad_configs() {
  return {
      {"yaml syntax", "training: {epochs: 1\nsweep: {}\n",
       "t.yaml:2:6: YAML syntax error: end of map flow not found"},
      {"not a map", "- 1\n- 2\n",
       "t.yaml:1:1: a config is a map of sections (name, data, model, training, sweep, ...), got a "
       "list"},
      {"unknown top-level key", kBase + "trainig: {}\n",
       "t.yaml:4:1: key 'trainig': unknown key, did you mean 'training'?"},
      {"unknown training key", "training:\n  learnin_rate: 0.1\n",
       "t.yaml:2:3: key 'training.learnin_rate': unknown key, did you mean 'learning_rate'?"},
      {"not a number", "training: {learning_rate: abc}\n",
       "t.yaml:1:27: key 'training.learning_rate': expected a number, got 'abc'"},
      {"negative learning rate", "training:\n  learning_rate: -0.1\n",
       "t.yaml:2:18: key 'training.learning_rate': must be > 0, got -0.1"},
      {"batch size zero", "training: {batch_size: 0}\n",
       "t.yaml:1:24: key 'training.batch_size': must be >= 1, got 0"},
      {"fractional batch size", "training: {batch_size: 2.5}\n",
       "t.yaml:1:24: key 'training.batch_size': expected an integer, got '2.5'"},
      {"gpus_per_trial zero", "resources: {gpus_per_trial: 0}\n",
       "t.yaml:1:29: key 'resources.gpus_per_trial': must be >= 1, got 0"},
      {"gpus_per_trial a word", "resources: {gpus_per_trial: two}\n",
       "t.yaml:1:29: key 'resources.gpus_per_trial': expected an integer, got 'two'"},
      {"gpus_per_trial swept with a word",
       kBase + "sweep:\n  parameters:\n    resources.gpus_per_trial: {values: [1, two]}\n",
       "t.yaml:6:44: key 'sweep.parameters.resources.gpus_per_trial': a GPU count is a whole "
       "number >= 1 or all, got \"two\""},
      {"gpus_per_trial swept by a distribution",
       kBase + "sweep:\n  parameters:\n    resources.gpus_per_trial: {min: 1, max: 2}\n",
       "t.yaml:6:5: key 'sweep.parameters.resources.gpus_per_trial': is swept with a list of GPU "
       "counts, such as values: [1, 2]"},
      {"other resources keys are not swept",
       kBase + "sweep:\n  parameters:\n    resources.trials_per_gpu: {values: [1, 2]}\n",
       "t.yaml:6:5: key 'sweep.parameters.resources.trials_per_gpu': only data.*, model.* and "
       "training.* keys (and resources.gpus_per_trial) can be swept"},
      {"epochs zero", "training: {epochs: 0}\n",
       "t.yaml:1:20: key 'training.epochs': must be >= 1, got 0"},
      {"momentum one", "training: {momentum: 1}\n",
       "t.yaml:1:22: key 'training.momentum': must be in [0, 1), got 1"},
      {"unknown optimizer", "training: {optimizer: adamw}\n",
       "t.yaml:1:23: key 'training.optimizer': unknown optimizer 'adamw' (did you mean 'adam'?)"},
      {"unknown schedule", "training: {schedule: {type: step}}\n",
       "t.yaml:1:29: key 'training.schedule.type': unknown schedule 'step' (one of: fixed, "
       "piecewise, multistep, inv, exp, poly, cosine)"},
      {"boolean expected", "data: {dataset: synthetic, augment: {flip: maybe}}\n",
       "t.yaml:1:44: key 'data.augment.flip': expected true or false, got 'maybe'"},
      {"unknown preset", "model: {preset: resnt}\n",
       "t.yaml:1:17: key 'model.preset': unknown preset 'resnt' (did you mean 'resnet'?)"},
      {"resnet depth", "model: {preset: resnet, depth: 21}\n",
       "t.yaml:1:32: key 'model.depth': preset resnet has no depth 21; it builds 6n+2 from 8 to "
       "1202 (CIFAR ResNets: 20, 32, 44, 56, 110, ...) or 18, 34 (ResNet-18/34, CIFAR variant)"},
      {"resnet depth swept",
       "data: {dataset: synthetic}\nmodel: {preset: resnet}\n"
       "sweep:\n  parameters:\n    model.depth: {values: [20, 27]}\n",
       "t.yaml:5:32: key 'model.depth': preset resnet has no depth 27; it builds 6n+2 from 8 to "
       "1202 (CIFAR ResNets: 20, 32, 44, 56, 110, ...) or 18, 34 (ResNet-18/34, CIFAR variant)"},
      {"resnet width", "model: {preset: resnet, width: 0}\n",
       "t.yaml:1:32: key 'model.width': must be in [1, 64], got 0"},
      {"residual without layers", "model:\n  layers:\n    - residual: {layers: []}\n",
       "t.yaml:3:26: key 'model.layers.0.residual.layers': the list of layers is empty"},
      {"residual with an unknown layer",
       "model:\n  layers:\n    - conv: {filters: 8, kernel: 3, padding: same}\n"
       "    - residual: [{conv: {filters: 8, kernel: 3, padding: same}}, rleu]\n",
       "t.yaml:4:66: key 'model.layers.1.residual.1': unknown layer type 'rleu' (did you mean "
       "'relu'?)"},
      {"residual activation",
       "model:\n  layers:\n    - residual: {layers: [relu], activation: tanh}\n",
       "t.yaml:3:46: key 'model.layers.0.residual.activation': unknown activation 'tanh' (one of: "
       "relu, none)"},
      {"argument of a layer inside a residual block",
       "model:\n  layers:\n    - residual:\n        layers:\n"
       "          - conv: {filters: 8, kernel: 3, padding: same}\n          - batchnorm: {eps: "
       "0}\n",
       "t.yaml:6:30: key 'model.layers.0.residual.layers.1.batchnorm.eps': must be > 0, got 0"},
      {"unknown layer", "model:\n  layers:\n    - conv: {filters: 8, kernel: 3}\n    - rleu\n",
       "t.yaml:4:7: key 'model.layers.1': unknown layer type 'rleu' (did you mean 'relu'?)"},
      {"layer missing argument", "model:\n  layers:\n    - conv: {filters: 8}\n",
       "t.yaml:3:13: key 'model.layers.0.conv': 'conv' needs 'kernel'"},
      {"dropout rate", "model:\n  layers:\n    - dense: 10\n    - dropout: 1.5\n",
       "t.yaml:4:16: key 'model.layers.1.dropout': must be in [0, 1), got 1.5"},
      {"preset and layers", "model: {preset: lenet, layers: [relu]}\n",
       "t.yaml:1:17: key 'model.preset': give either model.preset or model.layers, not both"},
      {"missing data files", "data: {dataset: mnist, path: /nonexistent/mnist}\n",
       "t.yaml:1:30: key 'data.path': data directory '/nonexistent/mnist' does not exist"},
      {"unknown dataset", "data: {dataset: cifar100}\n",
       "t.yaml:1:17: key 'data.dataset': unknown data set 'cifar100' (did you mean 'cifar10'?)"},
      {"bayes without max_trials", kBase + "sweep: {method: bayes}\n",
       "t.yaml:4:17: key 'sweep.method': bayes (run as tpe) needs max_trials: N (W&B's run_cap), "
       "the number of trials it suggests"},
      {"unknown method", kBase + "sweep: {method: grd}\n",
       "t.yaml:4:17: key 'sweep.method': unknown method 'grd' (did you mean 'grid'?)"},
      {"unknown metric", kBase + "sweep: {metric: {name: val_acuracy}}\n",
       "t.yaml:4:24: key 'sweep.metric.name': unknown metric 'val_acuracy': did you mean "
       "'val_accuracy'? (an external trainer command may report any name)"},
      {"unknown distribution",
       kBase + "sweep:\n  method: random\n  max_trials: 2\n"
               "  parameters:\n    training.momentum: {distribution: "
               "uniformm, min: 0, max: 0.9}\n",
       "t.yaml:8:39: key 'sweep.parameters.training.momentum.distribution': unknown distribution "
       "'uniformm' (did you mean 'uniform'?)"},
      {"grid over a continuous distribution",
       kBase + "sweep:\n  parameters:\n    training.momentum: {min: 0.5, max: 0.9}\n",
       "t.yaml:6:5: key 'sweep.parameters.training.momentum': grid needs values: distribution "
       "uniform has no finite set of values (give values: [...], or use method: random)"},
      {"random without max_trials",
       kBase +
           "sweep:\n  method: random\n  parameters:\n    training.momentum: {min: 0.5, max: 0.9}\n",
       "t.yaml:5:11: key 'sweep.method': random search needs max_trials: N (W&B's run_cap)"},
      {"log_uniform_values with min 0",
       kBase + "sweep:\n  method: random\n  max_trials: 2\n  parameters:\n"
               "    training.learning_rate: {distribution: log_uniform_values, min: 0, max: 1}\n",
       "t.yaml:8:69: key 'sweep.parameters.training.learning_rate.min': log_uniform_values takes "
       "the values themselves: min must be > 0, got 0 (log_uniform takes natural-log exponents "
       "instead)"},
      {"key a distribution does not take",
       kBase + "sweep:\n  method: random\n  max_trials: 2\n  parameters:\n"
               "    training.momentum: {distribution: uniform, min: 0, max: 0.5, q: 0.1}\n",
       "t.yaml:8:69: key 'sweep.parameters.training.momentum.q': distribution uniform does not "
       "take 'q'"},
      {"swept value invalid (grid): reported at the value in sweep.parameters",
       kBase + "sweep:\n  parameters:\n    training.batch_size: {values: [16, 0]}\n",
       "t.yaml:6:40: key 'training.batch_size': must be >= 1, got 0"},
      {"swept key unknown: did you mean, at sweep.parameters",
       kBase + "sweep:\n  parameters:\n    training.weight_decy: {values: [0.1]}\n",
       "t.yaml:6:37: key 'training.weight_decy': unknown key, did you mean 'weight_decay'?"},
      {"swept key outside data/model/training",
       kBase + "sweep:\n  parameters:\n    trainng.epochs: {values: [1]}\n",
       "t.yaml:6:5: key 'sweep.parameters.trainng.epochs': only data.*, model.* and training.* "
       "keys (and resources.gpus_per_trial) can be swept (did you mean 'training.epochs'?)"},
      {"unknown early_terminate", kBase + "sweep: {early_terminate: {type: ash}}\n",
       "t.yaml:4:33: key 'sweep.early_terminate.type': unknown early_terminate type 'ash' (did you "
       "mean 'asha'?)"},
      {"key early_terminate type does not take",
       kBase + "sweep: {early_terminate: {type: median, eta: 3}}\n",
       "t.yaml:4:41: key 'sweep.early_terminate.eta': unknown key (keys of sweep.early_terminate: "
       "type, min_epochs, grace_period, min_trials)"},
      {"hyperband forms mixed",
       kBase + "sweep: {early_terminate: {type: hyperband, min_iter: 1, max_iter: 9, s: 2}}\n",
       "t.yaml:4:33: key 'sweep.early_terminate.type': hyperband takes either min_iter (and eta) "
       "or max_iter and s (and eta), not both"},
      // Refused when read, as the sweep would refuse it when run (where it left a sweep that
      // could not be resumed either).
      {"hyperband without bands", kBase + "sweep: {early_terminate: {type: hyperband}}\n",
       "t.yaml:4:33: key 'sweep.early_terminate.type': hyperband needs min_iter (or max_iter and "
       "s), as in W&B"},
      {"asha capped before its first rung",
       "data: {dataset: synthetic}\ntraining: {epochs: 5}\n"
       "sweep: {early_terminate: {type: asha, min_epochs: 2, max_epochs: 2}}\n",
       "t.yaml:3:66: key 'sweep.early_terminate.max_epochs': ASHA's rungs end before max_epochs "
       "2, and its first is at min_epochs 2: there would be none, and nothing would be stopped"},
      {"hyperband's first band after the last epoch",
       kBase + "sweep: {early_terminate: {type: hyperband, max_iter: 100, s: 2}}\n",
       "t.yaml:4:33: key 'sweep.early_terminate.type': its first decision is at epoch 11, after "
       "the last epoch any trial trains (training.epochs 1): nothing would be stopped"},
      {"median's first decision after the largest swept epochs",
       kBase + "sweep: {early_terminate: {type: median, min_epochs: 4},\n"
               "        parameters: {training.epochs: {values: [2, 3]}}}\n",
       "t.yaml:4:33: key 'sweep.early_terminate.type': its first decision is at epoch 4, after the "
       "last epoch any trial trains (the largest swept training.epochs 3): nothing would be "
       "stopped"},
      {"a flat name and its key both swept",
       kBase + "sweep:\n  parameters:\n    learning_rate: {values: [0.01, 0.1]}\n"
               "    training.learning_rate: {values: [0.2, 0.3]}\n",
       "t.yaml:7:5: sets training.learning_rate, as the parameter at line 6, column 5 does: in "
       "every trial one would overwrite the other; sweep one of them"},
      {"an alias and its key both swept",
       kBase + "sweep:\n  parameters:\n    training.max_epochs: {values: [1]}\n"
               "    training.epochs: {values: [2]}\n",
       "t.yaml:7:5: sets training.epochs, as the parameter at line 6, column 5 does: in every "
       "trial one would overwrite the other; sweep one of them"},
      {"a section and a key inside it both swept",
       kBase + "sweep:\n  parameters:\n"
               "    training.early_stopping: {values: [{patience: 1}, {patience: 2}]}\n"
               "    training.early_stopping.patience: {values: [5]}\n",
       "t.yaml:7:5: sets training.early_stopping.patience, and the parameter at line 6, column 5 "
       "sets training.early_stopping, which holds it: in every trial one would overwrite the "
       "other; sweep one of them"},
      {"cpu slots beyond any machine", kBase + "resources: {cpu_slots: 100000}\n",
       "t.yaml:4:24: key 'resources.cpu_slots': must be in [1, 1024], got 100000"},
      {"a value listed twice",
       kBase + "sweep: {parameters: {training.learning_rate: {values: [0.01, 1e-2]}}}\n",
       "t.yaml:4:62: key 'sweep.parameters.training.learning_rate.values': lists 1e-2 again (0.01, "
       "item 1): every point would train twice (sweep.repeats: N runs each point with N seeds)"},
      {"a tab in the indentation", "training:\n\tepochs: 2\n",
       "t.yaml:2:8: YAML syntax error: illegal map value (line 2 is indented with a tab: YAML "
       "indents with spaces only)"},
      {"infinity", "training: {momentum: .inf}\n",
       "t.yaml:1:22: key 'training.momentum': expected a finite number, got '.inf'"},
      {"an integer too large", "training: {seed: 99999999999999999999}\n",
       "t.yaml:1:18: key 'training.seed': expected an integer from -9e15 to 9e15, got "
       "'99999999999999999999'"},
      {"an empty list", kBase + "sweep: {parameters: {training.epochs: {values: []}}}\n",
       "t.yaml:4:48: key 'sweep.parameters.training.epochs.values': expected a non-empty list, got "
       "an empty list"},
      {"a merge key", "defs: &d {epochs: 2}\ntraining:\n  <<: *d\n",
       "t.yaml:3:3: key 'training.<<': YAML merge keys (<<) are not supported: write the keys out "
       "(an anchor and alias of the whole map, key: *name, work)"},
      {"a NUL byte in a path", kBase + "output: {dir: \"ab\\0cd\"}\n",
       "t.yaml:4:15: key 'output.dir': the text holds a NUL byte (\\0), which no name, path or "
       "command can hold"},
      {"bad execution", kBase + "resources: {execution: gpus}\n",
       "t.yaml:4:24: key 'resources.execution': unknown execution 'gpus' (did you mean 'gpu'?)"},
      {"gpus twice", kBase + "resources: {gpus: [0, 0]}\n",
       "t.yaml:4:19: key 'resources.gpus': lists a GPU twice"},
      {"patience without validation",
       "data: {dataset: synthetic, validation: none}\n"
       "training: {early_stopping: {patience: 2}}\n"
       "sweep: {metric: {name: train_loss}}\n",
       "t.yaml:2:39: key 'training.early_stopping.patience': early stopping on val_loss needs a "
       "validation set, but data.validation is none"},
      {"bad name", kBase + "name: my sweep\n",
       "t.yaml:4:7: key 'name': 'my sweep' cannot name a directory under runs/: use letters, "
       "digits, '-', '_' and '.'"},
      {"command placeholder", "trainer: {command: \"echo {nope}\"}\nsweep: {metric: {name: s}}\n",
       "t.yaml:1:20: key 'trainer.command': placeholder {nope} names no swept parameter, config "
       "value, or {trial}, {repeat}, {seed}, {args_json}, {trial_dir}"},
  };
}

TEST(BadConfigs, EachReportsItsLineAndText) {
  for (const BadConfig& bad : bad_configs()) {
    const std::vector<std::string> lines = problems(bad.yaml);
    EXPECT_NE(std::find(lines.begin(), lines.end(), bad.expected), lines.end())
        << bad.what << "\n  expected: " << bad.expected << "\n  got:\n    "
        << ::testing::PrintToString(lines);
  }
}

TEST(BadConfigs, AllProblemsOfAFileAreReportedInLineOrder) {
  const std::vector<std::string> lines =
      problems("training:\n  learning_rate: -1\n  batch_size: 0\n  epochs: x\n");
  ASSERT_EQ(lines.size(), 3u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0].rfind("t.yaml:2:", 0), 0u);
  EXPECT_EQ(lines[1].rfind("t.yaml:3:", 0), 0u);
  EXPECT_EQ(lines[2].rfind("t.yaml:4:", 0), 0u);
}

TEST(BadConfigs, DrawnValuesOutOfRangeAreOneLine) {
  const std::vector<std::string> lines =
      problems(kBase +
               "sweep:\n  method: random\n  max_trials: 50\n  parameters:\n"
               "    training.learning_rate: {distribution: uniform, min: -1, max: 1}\n");
  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0].rfind("t.yaml:8:5: key 'training.learning_rate': must be > 0, got -", 0), 0u);
  EXPECT_NE(lines[0].find("more draws like it)"), std::string::npos);
}

TEST(BadConfigs, ABaseProblemIsReportedOnceNotOncePerTrial) {
  const std::vector<std::string> lines = problems(
      "data: {dataset: synthetic}\ntraining: {momentum: 2}\n"
      "sweep:\n  parameters:\n    training.batch_size: {values: [1, 2, 3, 4]}\n");
  EXPECT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
}

// A loss maximized runs (it may be meant), but is said: its best trial would be the worst.
TEST(BadConfigs, AMaximizedLossIsWarnedAbout) {
  const SweepConfig config =
      load_text(kBase + "sweep: {metric: {name: val_loss, goal: maximize}}\n");
  ASSERT_EQ(config.warnings.size(), 1u);
  EXPECT_EQ(config.warnings[0],
            "t.yaml:4:40: warning: key 'sweep.metric.goal': maximizes val_loss, which reads as a "
            "loss or an error (lower is better): the best trial would be the worst one");
  EXPECT_TRUE(load_text(kBase + "sweep: {metric: {name: val_loss}}\n").warnings.empty());
}

// The last epoch an early_terminate block is checked against is the largest a trial trains: a
// swept training.epochs, not the base's (which every trial overrides).
TEST(BadConfigs, EarlyStoppingIsCheckedAgainstTheLargestSweptEpochs) {
  EXPECT_TRUE(problems(kBase + "sweep: {early_terminate: {type: asha, min_epochs: 3},\n"
                               "        parameters: {training.epochs: {values: [1, 4]}}}\n")
                  .empty());
  EXPECT_TRUE(problems(kBase + "sweep: {method: random, max_trials: 2,\n"
                               "        early_terminate: {type: asha, min_epochs: 3},\n"
                               "        parameters: {training.epochs: {distribution: int_uniform, "
                               "min: 1, max: 4}}}\n")
                  .empty());
}

TEST(BadConfigs, CaffeAliasesAreAcceptedButNotTogetherWithTheCanonicalKey) {
  const SweepConfig config =
      load_text("data: {dataset: synthetic}\ntraining: {base_lr: 0.05, max_epochs: 3}\n");
  EXPECT_EQ(config.base.training.learning_rate, 0.05);
  EXPECT_EQ(config.base.training.epochs, 3);
  const auto lines = problems("training: {base_lr: 0.05, learning_rate: 0.1}\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "t.yaml:1:21: key 'training.base_lr': 'base_lr' is another name for "
            "'learning_rate': give only one of them");
}

// Every bound of every numeric key of the key table (trainer/config_keys.h), in a file: the value
// past it is refused with the file, the line of the value and the key; the bound itself is
// refused or accepted as the range says. The library refuses the same values in the same words
// (tests/trainer/config_keys_test.cpp).
TEST(BadConfigs, EveryBoundOfEveryKeyIsCheckedWhereItStands) {
  int probed = 0;
  trainer::TrainConfig scratch;
  for (const trainer::ConfigKey& key : trainer::config_keys()) {
    const trainer::KeyField field = key.field(scratch);
    const bool real = std::holds_alternative<double*>(field);
    const bool list = std::holds_alternative<std::vector<int>*>(field);
    if (key.by_hand || !(real || list || std::holds_alternative<int*>(field) ||
                         std::holds_alternative<std::int64_t*>(field)))
      continue;
    SCOPED_TRACE(key.path());
    // The problem lines of a file with the key at `value` (in block style: one key a line).
    const auto lines_at = [&](double value, std::string& text) {
      YAML::Node root;
      root["data"]["dataset"] = key.folder_only ? "folder" : "synthetic";
      root["data"]["validation"] = "holdout";
      YAML::Node at = root;
      for (std::size_t start = 0, dot = 0; dot != std::string::npos; start = dot + 1) {
        dot = key.section.find('.', start);
        at.reset(at[std::string(key.section.substr(start, dot - start))]);
      }
      const std::string written = real ? shortest(value) : std::to_string(std::int64_t(value));
      if (list) {
        YAML::Node items(YAML::NodeType::Sequence);
        items.push_back(written);
        items.SetStyle(YAML::EmitterStyle::Flow);
        at[std::string(key.name)] = items;
      } else {
        at[std::string(key.name)] = written;
      }
      text = emit_yaml(root);
      trainer::TrainConfig read;
      return read_sections(text, read);
    };
    const std::string path = key.path() + (list ? ".0" : "");
    const auto expect_refused = [&](double value) {
      std::string text;
      const std::vector<std::string> lines = lines_at(value, text);
      const std::string written = real ? shortest(value) : std::to_string(std::int64_t(value));
      const std::string tail =
          ": key '" + path + "': must be " + key.range.describe() + ", got " + written;
      ASSERT_EQ(lines.size(), 1u) << text;
      ASSERT_TRUE(lines[0].starts_with("t.yaml:")) << lines[0];
      ASSERT_TRUE(lines[0].ends_with(tail)) << lines[0] << "\n" << text;
      // The line named is the value's line.
      const int line = std::stoi(lines[0].substr(7));
      std::istringstream in(text);
      std::string row;
      for (int i = 0; i < line; ++i) std::getline(in, row);
      EXPECT_NE(row.find(std::string(key.name) + ":"), std::string::npos) << text;
    };
    const auto expect_accepted = [&](double value) {
      std::string text;
      for (const std::string& line : lines_at(value, text))
        EXPECT_EQ(line.find("key '" + path + "'"), std::string::npos) << line;
    };
    const auto past = [&](double bound, double direction) {
      return real ? std::nextafter(bound, bound + direction) : bound + direction;
    };
    for (const bool low : {true, false}) {
      const std::optional<double> bound = low ? key.range.min : key.range.max;
      if (!bound) continue;
      const bool inclusive = low ? key.range.min_inclusive : key.range.max_inclusive;
      const double outward = low ? -1 : 1;
      expect_refused(past(*bound, outward));
      if (inclusive) {
        expect_accepted(*bound);
      } else {
        expect_refused(*bound);
        expect_accepted(past(*bound, -outward));
      }
      ++probed;
    }
  }
  EXPECT_GT(probed, 40);
}

}  // namespace
}  // namespace sweep::config::testing
