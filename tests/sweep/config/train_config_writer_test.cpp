// A trial's config written by train_config_writer and read back by the config reader is the same
// config: every field is set to a value other than its default, so a key the writer forgets (or
// the reader spells another way) comes back as the default and fails here. The sizes below fail
// to compile when a field is added to a struct, pointing here to give it a value.
#include "sweep/config/train_config_writer.h"

#include <gtest/gtest.h>

#include <set>

#include "config_test_util.h"
#include "sweep/config/yaml_tree.h"
#include "trainer/config_keys.h"

namespace sweep::config::testing {
namespace {

using namespace trainer;

// A new field changes the struct's size: set it in full_config() below, then update the number.
static_assert(sizeof(AugmentSpec) == 12, "a field was added to AugmentSpec: set it below");
static_assert(sizeof(SyntheticSpec) == 32, "a field was added to SyntheticSpec: set it below");
static_assert(sizeof(ModelSpec) == 80, "a field was added to ModelSpec: set it below");
static_assert(sizeof(LayerSpec) == 128, "a field was added to LayerSpec: set it in every_layer()");
static_assert(sizeof(ScheduleSpec) == 88, "a field was added to ScheduleSpec: set it below");
static_assert(sizeof(EarlyStoppingSpec) == 16, "a field was added: set it below");
static_assert(sizeof(TrainingSpec) == 232, "a field was added to TrainingSpec: set it below");
// FolderSpec is written only for dataset: folder: folder_data_config_test.cpp sets its fields.
static_assert(sizeof(FolderSpec) == 56, "a field was added to FolderSpec: set it there");
static_assert(sizeof(DataSpec) == 280, "a field was added to DataSpec: set it below");

TrainConfig full_config() {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.path = "/srv/data/x";
  c.data.validation = Validation::holdout;
  c.data.holdout_fraction = 0.2;
  c.data.train_limit = 1000;
  c.data.test_limit = 200;
  c.data.shuffle = ShuffleMode::once;
  c.data.normalize = false;
  c.data.augment = {true, 2, 3};
  c.data.synthetic = {300, 100, 3, 2, 12, 10, 7};
  c.data.validation_path = "/srv/data/val.csv";
  c.data.layout = Layout::nhwc;
  c.data.label = "target";
  c.data.feature_columns = {"b", "a"};
  c.model.preset = Preset::convnet;
  c.model.net_width = 8;
  c.model.block_depth = 3;
  c.model.depth = 32;
  c.model.width = 2;
  c.model.hidden = {32, 16};
  c.model.dropout = 0.25;
  TrainingSpec& t = c.training;
  t.optimizer = OptimizerKind::adam;
  t.learning_rate = 0.003;
  t.momentum = 0.8;
  t.nesterov = true;
  t.beta1 = 0.85;
  t.beta2 = 0.99;
  t.epsilon = 1e-7;
  t.rms_decay = 0.95;
  t.weight_decay = 1e-4;
  t.gradient_clip = 2.5;
  t.batch_size = 32;
  t.epochs = 7;
  t.schedule.type = ScheduleType::multistep;
  t.schedule.drop_factor = 0.5;
  t.schedule.drop_period = 3;
  t.schedule.milestones = {2, 5};
  t.schedule.gamma = 0.001;
  t.schedule.power = 0.5;
  t.schedule.min_lr = 1e-5;
  t.schedule.warmup_epochs = 1.5;
  t.schedule.warmup_start_factor = 0.1;
  t.validation_frequency = 20;
  t.log_every = 5;
  t.early_stopping = {4, MonitorMetric::val_accuracy, 0.01};
  t.output_network = OutputNetwork::last;
  t.seed = 42;
  t.precision = Precision::bf16;
  t.deterministic = true;
  t.checkpoint.every_epochs = 2;
  t.save_model = false;
  return c;
}

// Every layer type with every argument it takes, none at its default.
std::vector<LayerSpec> every_layer() {
  return {
      {LayerKind::conv, {{"filters", 6}, {"kernel", 3}, {"stride", 2}, {"bias", 0}}, {}},
      {LayerKind::conv, {{"filters", 4}, {"kernel", 3}, {"padding", 1}}, {}},
      {LayerKind::conv, {{"filters", 4}, {"kernel", 3}}, {{"padding", "same"}}},
      {LayerKind::batchnorm, {{"eps", 1e-3}, {"momentum", 0.05}}, {}},
      {LayerKind::relu, {}, {}},
      {LayerKind::maxpool, {{"size", 3}, {"stride", 1}, {"padding", 1}}, {}},
      {LayerKind::avgpool, {{"size", 2}, {"stride", 1}, {"padding", 0}}, {}},
      {LayerKind::gap, {}, {}},
      {LayerKind::flatten, {}, {}},
      {LayerKind::dense, {{"units", 20}, {"bias", 0}}, {}},
      {LayerKind::dropout, {{"rate", 0.3}}, {}},
      {LayerKind::residual,
       {},
       {{"activation", "none"}},
       {{LayerKind::conv, {{"filters", 4}, {"kernel", 3}}, {{"padding", "same"}}},
        {LayerKind::batchnorm, {}, {}},
        {LayerKind::residual, {}, {}, {{LayerKind::relu, {}, {}}}}}},
      {LayerKind::dense, {{"units", 10}}, {}},
  };
}

TrainConfig read_back(const TrainConfig& written) {
  const std::string text = emit_yaml(to_yaml(written));
  return load_text(text).base;
}

TEST(ConfigRoundTrip, EveryFieldOfAPresetConfigComesBack) {
  const TrainConfig written = full_config();
  const TrainConfig read = read_back(written);
  EXPECT_EQ(read.data, written.data) << emit_yaml(to_yaml(written));
  EXPECT_EQ(read.model, written.model) << emit_yaml(to_yaml(written));
  EXPECT_EQ(read.training, written.training) << emit_yaml(to_yaml(written));
  EXPECT_EQ(read, written);
}

TEST(ConfigRoundTrip, EveryLayerTypeAndArgumentComesBack) {
  TrainConfig written = full_config();
  written.model.preset = Preset::none;
  written.model.layers = every_layer();
  written.model.net_width = ModelSpec{}.net_width;  // preset options are not written with layers
  written.model.block_depth = ModelSpec{}.block_depth;
  written.model.depth = ModelSpec{}.depth;
  written.model.width = ModelSpec{}.width;
  written.model.hidden = ModelSpec{}.hidden;
  written.model.dropout = ModelSpec{}.dropout;
  const TrainConfig read = read_back(written);
  ASSERT_EQ(read.model.layers.size(), written.model.layers.size());
  for (std::size_t i = 0; i < read.model.layers.size(); ++i)
    EXPECT_EQ(read.model.layers[i], written.model.layers[i]) << "layer " << i;
  EXPECT_EQ(read, written);
}

// The test config really differs from the defaults everywhere it can be compared as a whole.
TEST(ConfigRoundTrip, TheTestConfigLeavesNothingAtItsDefault) {
  const TrainConfig defaults, full = full_config();
  EXPECT_NE(full.data.augment, defaults.data.augment);
  EXPECT_NE(full.data.synthetic, defaults.data.synthetic);
  EXPECT_NE(full.training.schedule, defaults.training.schedule);
  EXPECT_NE(full.training.early_stopping, defaults.training.early_stopping);
  const YAML::Node a = to_yaml(defaults), b = to_yaml(full);
  for (const char* section : {"data", "model", "training"})
    for (const auto& entry : b[section]) {
      const std::string key = entry.first.Scalar();
      if (key == "synthetic") continue;  // written only for the synthetic data set
      EXPECT_NE(emit_yaml(a[section][key]), emit_yaml(entry.second)) << section << "." << key;
    }
}

// ---- Each key of the key table (trainer/config_keys.h) alone ---------------------------------

// A config every key can be read into: synthetic data (folder data for a folder key), nothing
// that needs a file.
TrainConfig base_for(const ConfigKey& key) {
  TrainConfig c;
  c.data.dataset = key.folder_only ? DatasetKind::folder : DatasetKind::synthetic;
  c.data.path = key.folder_only ? "/srv/images" : "";
  c.data.validation = Validation::holdout;
  return c;
}

// Sets `key` in `c` to a valid value other than the one it holds; false when the test does not
// know one (by_hand keys: the tests above set them).
bool change(const ConfigKey& key, TrainConfig& c) {
  // The first candidate in the key's range other than `now`, written to `out`.
  const auto pick = [&](auto* out, std::vector<double> candidates) {
    for (double v : candidates)
      if (v != static_cast<double>(*out) && key.range.contains(v)) {
        *out = static_cast<std::remove_reference_t<decltype(*out)>>(v);
        return true;
      }
    return false;
  };
  return std::visit(Overloaded{[](std::monostate) { return false; },
                               [&](double* v) {
                                 return pick(v, {0.5, 0.25, 2, 3, 1e-3});
                               },
                               [&](int* v) {
                                 return pick(v, {3, 2, 5, 1});
                               },  // 3: data.channels refuses 2
                               [&](std::int64_t* v) {
                                 return pick(v, {3, 2, 5, 1});
                               },
                               [](std::uint64_t* v) { return ++*v, true; },
                               [](bool* v) { return *v = !*v, true; },
                               [](std::string* v) { return *v += "x", true; },
                               [](std::vector<int>* v) {
                                 return *v = {3, 5}, true;
                               },
                               [](std::vector<std::string>* v) {
                                 return *v = {"b", "a"}, true;
                               },
                               [](const WordField& w) {
                                 const std::string before(w.get(w.value));
                                 for (const std::string& word : w.words()) {
                                   w.set(w.value, word);
                                   if (w.get(w.value) != before) return true;
                                 }
                                 return false;
                               }},
                    key.field(c));
}

TEST(ConfigRoundTrip, EveryKeyOfTheTableIsWrittenAndReadBack) {
  int checked = 0;
  for (const ConfigKey& key : config_keys()) {
    if (key.by_hand || key.path() == "data.dataset") continue;  // set by the tests above
    SCOPED_TRACE(key.path());
    TrainConfig written = base_for(key);
    const TrainConfig before = written;
    ASSERT_TRUE(change(key, written)) << "no other value to try";
    ASSERT_NE(written, before);
    const std::string text = emit_yaml(to_yaml(written));
    TrainConfig read;
    EXPECT_EQ(read_sections(text, read), std::vector<std::string>{}) << text;
    EXPECT_EQ(read, written) << text;
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

// The dotted paths of the keys a written config holds (a map under a key table section is that
// section, not a key).
void written_keys(const YAML::Node& node, const std::string& path, std::set<std::string>& out) {
  const std::vector<std::string> sections = key_sections();
  for (const auto& entry : node) {
    const std::string key = path + (path.empty() ? "" : ".") + entry.first.Scalar();
    if (std::find(sections.begin(), sections.end(), key) != sections.end())
      written_keys(entry.second, key, out);
    else
      out.insert(key);
  }
}

TEST(ConfigRoundTrip, TheWriterWritesExactlyTheTablesKeys) {
  std::set<std::string> written;
  written_keys(to_yaml(full_config()), "", written);
  TrainConfig layers = full_config();
  layers.model.preset = Preset::none;
  layers.model.layers = every_layer();
  written_keys(to_yaml(layers), "", written);
  TrainConfig folder = full_config();
  folder.data.dataset = DatasetKind::folder;
  folder.data.folder = {3, 32, 24, ResizeMode::pad, OnBadFile::skip, "/tmp/cache"};
  folder.data.task = Task::regression;
  written_keys(to_yaml(folder), "", written);
  std::set<std::string> table;
  for (const ConfigKey& key : config_keys()) table.insert(key.path());
  EXPECT_EQ(written, table);
}

TEST(ConfigRoundTrip, TheReaderTakesExactlyTheTablesKeysAndAliases) {
  std::vector<std::string> asked;
  TrainConfig read;
  read_sections("", read, &asked);
  const std::vector<std::string> sections = key_sections();
  std::set<std::string> taken, table;
  for (const std::string& key : asked)
    if (std::find(sections.begin(), sections.end(), key) == sections.end()) taken.insert(key);
  for (const ConfigKey& key : config_keys()) table.insert(key.path());
  EXPECT_EQ(taken, table);
  // Each alias reads into its key.
  for (const ConfigKey& key : config_keys())
    for (std::string_view alias : key.aliases) {
      TrainConfig expected = base_for(key), got = base_for(key);
      ASSERT_TRUE(change(key, expected));
      YAML::Node root = to_yaml(expected);
      YAML::Node section = root[std::string(key.section)];
      section[std::string(alias)] = YAML::Clone(section[std::string(key.name)]);
      section.remove(std::string(key.name));
      EXPECT_EQ(read_sections(emit_yaml(root), got), std::vector<std::string>{}) << alias;
      EXPECT_EQ(got, expected) << alias;
    }
}

}  // namespace
}  // namespace sweep::config::testing
