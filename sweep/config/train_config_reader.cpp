/*
 * train_config_reader.cpp — data / model / training sections, field by field.
 *
 * The order of reads mirrors trainer/train_config.h so the two are easy to compare. Cross-field
 * rules (early stopping on a validation metric needs a validation set; multistep needs milestones;
 * a preset and a layer list exclude each other) run after the fields, on the values read.
 */
#include "sweep/config/train_config_reader.h"

#include <algorithm>
#include <filesystem>

#include "sweep/config/layers_reader.h"
#include "sweep/config/model_shape_check.h"
#include "sweep/config/suggest.h"
#include "trainer/data/csv_reader.h"
#include "trainer/data/folder_reader.h"
#include "trainer/data/image_decode.h"
#include "trainer/data/numpy_data.h"
#include "trainer/models.h"

namespace sweep::config {

namespace {

bool exists_raw_or_gz(const std::string& base) {
  std::error_code ec;
  return std::filesystem::is_regular_file(base, ec) ||
         std::filesystem::is_regular_file(base + ".gz", ec);
}

void read_augment(MapReader r, trainer::AugmentSpec& a) {
  r.boolean("flip", a.flip);
  r.integer("translate", a.translate, Range::closed(0, 64));
  r.integer("crop_padding", a.crop_padding, Range::closed(0, 64));
  r.finish();
}

void read_synthetic(MapReader r, trainer::SyntheticSpec& s) {
  r.integer("train_size", s.train_size, Range::at_least(1));
  r.integer("test_size", s.test_size, Range::at_least(1));
  r.integer("classes", s.classes, Range::at_least(2));
  r.integer("channels", s.channels, Range::closed(1, 4));
  r.integer("height", s.height, Range::at_least(1));
  r.integer("width", s.width, Range::at_least(1));
  r.unsigned64("seed", s.seed);
  r.finish();
}

// dataset: folder's own keys (trainer::FolderSpec), beside data.path in the data section. Given
// for another data set they are refused: they would change nothing.
void read_folder(MapReader& r, trainer::DataSpec& d) {
  trainer::FolderSpec& f = d.folder;
  const bool folder = d.dataset == trainer::DatasetKind::folder;
  for (const char* key : {"channels", "image_size", "resize", "on_bad_file", "cache_dir"})
    if (!folder && r.has(key)) {
      r.node(key);
      r.error(key, std::string("data.") + key + " applies to dataset: folder only");
    }
  if (!folder) return;
  if (r.integer("channels", f.channels, Range::closed(1, 3)) && f.channels == 2)
    r.error("channels", "must be 1 (grey) or 3 (RGB), not 2");
  std::vector<int> size;
  if (r.integer_list("image_size", size, Range::closed(1, trainer::kMaxImageSide))) {
    if (size.size() != 2)
      r.error("image_size",
              "expected [height, width], got " + std::to_string(size.size()) + " numbers");
    else if (std::int64_t(size[0]) * size[1] > trainer::kMaxImagePixels)
      r.error("image_size", "at most " + std::to_string(trainer::kMaxImagePixels) + " pixels");
    else
      f.height = size[0], f.width = size[1];
  }
  r.word("resize", f.resize, "resize mode");
  r.word("on_bad_file", f.on_bad_file, "on_bad_file");
  r.text("cache_dir", f.cache_dir);
}

// Returns whether the fields read without problems (missing data files aside: the images' shape
// is known without them).
bool read_data(MapReader r, trainer::DataSpec& d, const TrainReadOptions& options) {
  const std::size_t problems_before = r.diagnostics().error_count();
  r.word("dataset", d.dataset, "data set");
  d.path = default_data_path(d.dataset);
  r.text("path", d.path);
  r.word("validation", d.validation, "validation source");
  r.number("holdout_fraction", d.holdout_fraction, Range::open(0, 1));
  r.integer64("train_limit", d.train_limit, Range::at_least(0));
  r.integer64("test_limit", d.test_limit, Range::at_least(0));
  r.word("shuffle", d.shuffle, "shuffle mode");
  r.boolean("normalize", d.normalize);
  read_augment(r.section("augment"), d.augment);
  read_synthetic(r.section("synthetic"), d.synthetic);
  read_folder(r, d);
  r.text("validation_path", d.validation_path);
  r.word("task", d.task, "task");
  r.word("layout", d.layout, "layout");
  r.text("label", d.label);
  r.text_list("feature_columns", d.feature_columns);
  r.finish();
  const bool fields_read = r.diagnostics().error_count() == problems_before;
  // A folder set's validation folder is data.validation_path (a missing data.path is said first).
  if (fields_read && d.dataset == trainer::DatasetKind::folder && !d.path.empty() &&
      d.validation == trainer::Validation::test && d.validation_path.empty())
    r.error(r.has("validation") ? "validation" : "dataset",
            "dataset: folder validates on data.validation_path (a second folder with the same "
            "class folders), and it is not set; set it, or set validation: holdout or none");
  // A CSV set has no test split of its own: validation: test is its validation_path.
  if (fields_read && d.dataset == trainer::DatasetKind::csv &&
      d.validation == trainer::Validation::test && d.validation_path.empty())
    r.error(r.has("validation") ? "validation" : "dataset",
            "dataset: csv validates on data.validation_path (another CSV file with the same "
            "header), and it is not set; set it, or set validation: holdout or none");

  if (options.check_data_files) {
    const std::string missing = missing_data_files(d);
    if (!missing.empty()) r.error(r.has("path") ? "path" : "dataset", missing);
  }
  return fields_read;
}

// Returns whether the model read without problems; `places` says where its keys stand.
bool read_model(MapReader r, trainer::ModelSpec& m, const ConfigTree& tree, ModelPlaces& places) {
  const std::size_t problems_before = r.diagnostics().error_count();
  // An empty preset is "no preset" (then model.layers is the model).
  bool preset_given = false;
  if (const YAML::Node p = r.node("preset"); p.IsScalar() && p.Scalar().empty())
    m.preset = trainer::Preset::none;
  else
    preset_given = r.word("preset", m.preset, "preset");
  r.integer("net_width", m.net_width, Range::at_least(1));
  r.integer("block_depth", m.block_depth, Range::at_least(1));
  if (r.integer("depth", m.depth, Range::at_least(1)) && m.preset == trainer::Preset::resnet &&
      !trainer::is_resnet_depth(m.depth))
    r.error("depth", "preset resnet has no depth " + std::to_string(m.depth) + "; it builds " +
                         trainer::resnet_depths_text());
  r.integer("width", m.width, Range::closed(1, trainer::kMaxResNetWidth));
  r.integer_list("hidden", m.hidden, Range::at_least(1));
  r.number("dropout", m.dropout, Range::half_open(0, 1));
  const YAML::Node layers = r.node("layers");
  if (layers.IsDefined() && !layers.IsNull()) {
    if (preset_given && m.preset != trainer::Preset::none) {
      r.error("preset", "give either model.preset or model.layers, not both");
    } else {
      m.preset = trainer::Preset::none;
      read_layers(tree, r.diagnostics(), layers, r.path_of("layers"), m.layers, places.entries);
    }
  } else if (m.preset == trainer::Preset::none) {
    r.error("preset", "model.preset is empty and there is no model.layers list");
  }
  places.preset = r.where("preset");
  places.layers = r.where("layers");
  r.finish();
  return r.diagnostics().error_count() == problems_before;
}

void read_schedule(MapReader r, trainer::ScheduleSpec& s) {
  r.word("type", s.type, "schedule");
  r.number("drop_factor", s.drop_factor, Range::positive());
  r.integer("drop_period", s.drop_period, Range::at_least(1));
  if (r.integer_list("milestones", s.milestones, Range::at_least(1))) {
    for (std::size_t i = 1; i < s.milestones.size(); ++i)
      if (s.milestones[i] <= s.milestones[i - 1]) {
        r.error("milestones", "must be increasing epochs, got " +
                                  std::to_string(s.milestones[i - 1]) + " then " +
                                  std::to_string(s.milestones[i]));
        break;
      }
  }
  r.number("gamma", s.gamma, Range::positive());
  r.number("power", s.power, Range::at_least(0));
  r.number("min_lr", s.min_lr, Range::at_least(0));
  r.number("warmup_epochs", s.warmup_epochs, Range::at_least(0));
  r.number("warmup_start_factor", s.warmup_start_factor, Range::closed(0, 1));
  r.finish();
  if (s.type == trainer::ScheduleType::multistep && s.milestones.empty())
    r.error("type", "schedule multistep needs milestones: [epoch, ...]");
}

void read_early_stopping(MapReader r, trainer::EarlyStoppingSpec& e) {
  r.integer("patience", e.patience, Range::at_least(0));
  r.word("monitor", e.monitor, "metric to monitor");
  r.number("min_delta", e.min_delta, Range::at_least(0));
  r.finish();
}

void read_training(MapReader r, trainer::TrainingSpec& t) {
  r.word("optimizer", t.optimizer, "optimizer");
  r.number("learning_rate", t.learning_rate, Range::positive());
  r.number("momentum", t.momentum, Range::half_open(0, 1));
  r.boolean("nesterov", t.nesterov);
  r.number("beta1", t.beta1, Range::half_open(0, 1));
  r.number("beta2", t.beta2, Range::half_open(0, 1));
  r.number("epsilon", t.epsilon, Range::positive());
  r.number("rms_decay", t.rms_decay, Range::half_open(0, 1));
  r.number("weight_decay", t.weight_decay, Range::at_least(0));
  r.number("gradient_clip", t.gradient_clip, Range::at_least(0));
  r.integer("batch_size", t.batch_size, Range::at_least(1));
  r.integer("epochs", t.epochs, Range::at_least(1));
  read_schedule(r.section("schedule"), t.schedule);
  r.integer("validation_frequency", t.validation_frequency, Range::at_least(0));
  r.integer("log_every", t.log_every, Range::at_least(1));
  read_early_stopping(r.section("early_stopping"), t.early_stopping);
  r.word("output_network", t.output_network, "output network");
  r.unsigned64("seed", t.seed);
  r.word("precision", t.precision, "precision");
  r.boolean("deterministic", t.deterministic);
  r.boolean("save_model", t.save_model);
  MapReader checkpoint = r.section("checkpoint");
  checkpoint.integer("every_epochs", t.checkpoint.every_epochs, Range::at_least(0));
  checkpoint.finish();
  r.finish();
}

// dataset: numpy and csv: the file (or for numpy the directory) named, the arrays the
// validation needs, and what the readers refuse in them.
std::string missing_table_files(const trainer::DataSpec& spec) {
  std::error_code ec;
  const bool numpy = spec.dataset == trainer::DatasetKind::numpy;
  if (spec.path.empty())
    return std::string("dataset: ") + (numpy ? "numpy" : "csv") + " needs data.path (" +
           (numpy ? "an .npz file or a directory of .npy files)" : "a CSV file)");
  if (numpy ? !std::filesystem::exists(spec.path, ec)
            : !std::filesystem::is_regular_file(spec.path, ec))
    return "data file '" + spec.path + "' does not exist" +
           (numpy ? " (dataset: numpy reads an .npz file or a directory of .npy files)"
                  : " (dataset: csv reads one CSV file)");
  if (!spec.validation_path.empty() && !std::filesystem::is_regular_file(spec.validation_path, ec))
    return "data.validation_path '" + spec.validation_path + "' does not exist";
  // The files read as a trial would read them (a CSV whole; an .npz's directory, every header
  // and the labels), so that a bad value, dtype or shape stops the sweep before anything is
  // written rather than failing every trial.
  try {
    if (!numpy) {
      const trainer::CsvOptions o{spec.label, spec.feature_columns, spec.task};
      const trainer::Dataset train = trainer::read_csv(spec.path, o);
      if (!spec.validation_path.empty())
        trainer::read_csv_validation(spec.validation_path, o, spec.path, train);
      return "";
    }
    const std::string missing =
        trainer::numpy_missing_arrays(spec.path, spec.validation == trainer::Validation::test);
    if (!missing.empty())
      return "missing numpy arrays in '" + spec.path + "': " + missing +
             (spec.validation == trainer::Validation::test
                  ? " (validation: test reads x_test and y_test; or set validation: holdout)"
                  : "");
    trainer::numpy_shape(spec.path, {spec.layout, spec.task});
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// dataset: folder: data.path (and validation_path) must be folders of at least two class
// folders; the images themselves are checked when they are read.
std::string missing_folder_files(const trainer::DataSpec& spec) {
  if (spec.path.empty())
    return "dataset: folder needs data.path (a folder holding one folder of images per class)";
  try {
    const std::vector<std::string> classes = trainer::list_class_folders(spec.path, "data.path");
    if (spec.validation_path.empty()) return "";
    const std::vector<std::string> other =
        trainer::list_class_folders(spec.validation_path, "data.validation_path");
    for (const std::string& c : classes)
      if (std::find(other.begin(), other.end(), c) == other.end())
        return "data.validation_path " + spec.validation_path + ": no class folder " + c +
               " (expected the same class folders as data.path)";
    for (const std::string& c : other)
      if (std::find(classes.begin(), classes.end(), c) == classes.end())
        return "data.validation_path " + spec.validation_path + ": the class folder " + c +
               " is not a class of data.path (expected the same class folders)";
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

std::string default_data_path(trainer::DatasetKind dataset) {
  switch (dataset) {
    case trainer::DatasetKind::mnist:
      return "/usr/share/datasets/mnist";
    case trainer::DatasetKind::cifar10:
      return "/usr/share/datasets/cifar-10";
    case trainer::DatasetKind::synthetic:
    case trainer::DatasetKind::numpy:  // no default: the user's own file
    case trainer::DatasetKind::csv:
    case trainer::DatasetKind::folder:
      return "";
    case trainer::DatasetKind::fashion_mnist:
      break;
  }
  return "/usr/share/datasets/fashion-mnist";
}

std::string missing_data_files(const trainer::DataSpec& spec) {
  const bool need_test = spec.validation == trainer::Validation::test;
  std::error_code ec;
  if (spec.dataset == trainer::DatasetKind::synthetic) return "";
  if (spec.dataset == trainer::DatasetKind::numpy || spec.dataset == trainer::DatasetKind::csv)
    return missing_table_files(spec);
  if (spec.dataset == trainer::DatasetKind::folder) return missing_folder_files(spec);
  if (!std::filesystem::is_directory(spec.path, ec)) {
    std::string text = "data directory '" + spec.path + "' does not exist";
    if (spec.dataset == trainer::DatasetKind::cifar10)
      text +=
          " (no Debian package ships CIFAR-10: put the binary version's data_batch_1..5.bin "
          "and test_batch.bin there, or set data.path; data.dataset: synthetic runs without it)";
    return text;
  }
  std::vector<std::string> missing;
  if (spec.dataset == trainer::DatasetKind::fashion_mnist ||
      spec.dataset == trainer::DatasetKind::mnist) {
    std::vector<std::string> splits = {"train"};
    if (need_test) splits.push_back("t10k");
    for (const std::string& split : splits)
      for (const char* kind : {"-images-idx3-ubyte", "-labels-idx1-ubyte"})
        if (!exists_raw_or_gz(spec.path + "/" + split + kind))
          missing.push_back(split + kind + "[.gz]");
  } else {
    std::string base = spec.path;
    if (!std::filesystem::exists(base + "/test_batch.bin", ec) &&
        std::filesystem::exists(base + "/cifar-10-batches-bin/test_batch.bin", ec))
      base += "/cifar-10-batches-bin";
    std::vector<std::string> files;
    for (int i = 1; i <= 5; ++i) files.push_back("data_batch_" + std::to_string(i) + ".bin");
    if (need_test) files.push_back("test_batch.bin");
    for (const std::string& f : files)
      if (!std::filesystem::is_regular_file(base + "/" + f, ec)) missing.push_back(f);
  }
  if (missing.empty()) return "";
  return "missing " + std::string(trainer::name_of(spec.dataset)) + " files in '" + spec.path +
         "': " + join(missing);
}

void read_train_config(MapReader& top, trainer::TrainConfig& out, const TrainReadOptions& options) {
  const bool data_read = read_data(top.section("data"), out.data, options);
  ModelPlaces model_places;
  const bool model_read = read_model(top.section("model"), out.model, top.tree(), model_places);
  read_training(top.section("training"), out.training);
  if (options.check_model_shapes && data_read && model_read)
    check_model_shapes(top.tree(), out, model_places, top.diagnostics());

  const auto& stopping = out.training.early_stopping;
  if (stopping.patience > 0 && stopping.monitor != trainer::MonitorMetric::train_loss &&
      out.data.validation == trainer::Validation::none) {
    MapReader training = top.section("training");
    MapReader early = training.section("early_stopping");
    early.error(early.has("monitor") ? "monitor" : "patience",
                "early stopping on " + std::string(trainer::name_of(stopping.monitor)) +
                    " needs a validation set, but data.validation is none");
  }
}

}  // namespace sweep::config
