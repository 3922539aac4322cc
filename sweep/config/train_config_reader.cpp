/*
 * train_config_reader.cpp — data / model / training sections, key by key of the key table.
 *
 * Every key, its type and its range come from trainer/config_keys.h; the keys it marks by_hand
 * (data.path, data.image_size, model.preset, model.layers) are read here by name. Cross-field
 * rules (early stopping on a validation metric needs a validation set; multistep needs milestones;
 * a preset and a layer list exclude each other) run after the fields, on the values read.
 */
#include "sweep/config/train_config_reader.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <variant>

#include "sweep/config/layers_reader.h"
#include "sweep/config/model_shape_check.h"
#include "sweep/config/suggest.h"
#include "trainer/config_keys.h"
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

// Reads one key of the table (trainer/config_keys.h) into its field, by the field's type.
// Returns whether the key was present and valid.
bool read_key(MapReader& r, const trainer::ConfigKey& key, trainer::TrainConfig& config) {
  const std::string name(key.name);
  return std::visit(
      trainer::Overloaded{[](std::monostate) { return false; },
                          [&](double* v) { return r.number(name, *v, key.range); },
                          [&](int* v) { return r.integer(name, *v, key.range); },
                          [&](std::int64_t* v) { return r.integer64(name, *v, key.range); },
                          [&](std::uint64_t* v) { return r.unsigned64(name, *v); },
                          [&](bool* v) { return r.boolean(name, *v); },
                          [&](std::string* v) { return r.text(name, *v); },
                          [&](std::vector<int>* v) { return r.integer_list(name, *v, key.range); },
                          [&](std::vector<std::string>* v) { return r.text_list(name, *v); },
                          [&](const trainer::WordField& w) {
                            std::string given;
                            if (!r.choice(name, given, w.words(), std::string(key.noun)))
                              return false;
                            return w.set(w.value, given);
                          }},
      key.field(config));
}

// The paths of the keys that were present and valid ("model.depth").
using ReadKeys = std::set<std::string>;
// Reads a key the table marks by_hand; returns whether it was present and valid.
using HandRead = std::function<bool(MapReader&, const trainer::ConfigKey&)>;

// Reads the keys of `section` in the table's order, each subsection where its first key stands,
// then reports the keys the file has that the table does not.
void read_section(MapReader& r, const std::string& section, trainer::TrainConfig& config,
                  const HandRead& by_hand, ReadKeys& read) {
  std::vector<std::string> subsections;
  for (const trainer::ConfigKey& key : trainer::config_keys()) {
    if (key.section == section) {
      const std::string name(key.name);
      // dataset: folder's own keys (trainer::FolderSpec), beside data.path. Given for another
      // data set they are refused: they would change nothing.
      if (key.folder_only && config.data.dataset != trainer::DatasetKind::folder) {
        if (r.has(name)) r.error(name, key.path() + " applies to dataset: folder only");
        continue;
      }
      if (key.by_hand ? by_hand(r, key) : read_key(r, key, config)) read.insert(key.path());
    } else if (key.section.starts_with(section + ".")) {
      const std::string rest(key.section.substr(section.size() + 1));
      const std::string child = rest.substr(0, rest.find('.'));
      if (std::find(subsections.begin(), subsections.end(), child) != subsections.end()) continue;
      subsections.push_back(child);
      MapReader sub = r.section(child);
      read_section(sub, section + "." + child, config, by_hand, read);
    }
  }
  r.finish();
}

// Returns whether the fields read without problems (missing data files aside: the images' shape
// is known without them).
bool read_data(MapReader r, trainer::TrainConfig& config, const TrainReadOptions& options) {
  trainer::DataSpec& d = config.data;
  const std::size_t problems_before = r.diagnostics().error_count();
  const HandRead by_hand = [&](MapReader& in, const trainer::ConfigKey& key) {
    if (key.name == "path") {
      d.path = default_data_path(d.dataset);
      return in.text("path", d.path);
    }
    std::vector<int> size;  // image_size
    if (!in.integer_list("image_size", size, key.range)) return false;
    if (size.size() != 2)
      in.error("image_size",
               "expected [height, width], got " + std::to_string(size.size()) + " numbers");
    else if (std::int64_t(size[0]) * size[1] > trainer::kMaxImagePixels)
      in.error("image_size", "at most " + std::to_string(trainer::kMaxImagePixels) + " pixels");
    else
      d.folder.height = size[0], d.folder.width = size[1];
    return true;
  };
  ReadKeys read;
  read_section(r, "data", config, by_hand, read);
  if (read.count("data.channels") && d.folder.channels == 2)
    r.error("channels", "must be 1 (grey) or 3 (RGB), not 2");
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
bool read_model(MapReader r, trainer::TrainConfig& config, const ConfigTree& tree,
                ModelPlaces& places) {
  trainer::ModelSpec& m = config.model;
  const std::size_t problems_before = r.diagnostics().error_count();
  bool preset_given = false;
  const HandRead by_hand = [&](MapReader& in, const trainer::ConfigKey& key) {
    if (key.name == "preset") {
      // An empty preset is "no preset" (then model.layers is the model).
      if (const YAML::Node p = in.node("preset"); p.IsScalar() && p.Scalar().empty()) {
        m.preset = trainer::Preset::none;
        return true;
      }
      preset_given = read_key(in, key, config);
      return preset_given;
    }
    const YAML::Node layers = in.node("layers");
    if (layers.IsDefined() && !layers.IsNull()) {
      if (preset_given && m.preset != trainer::Preset::none) {
        in.error("preset", "give either model.preset or model.layers, not both");
      } else {
        m.preset = trainer::Preset::none;
        read_layers(tree, in.diagnostics(), layers, in.path_of("layers"), m.layers, places.entries);
        return true;
      }
    } else if (m.preset == trainer::Preset::none) {
      in.error("preset", "model.preset is empty and there is no model.layers list");
    }
    return false;
  };
  ReadKeys read;
  read_section(r, "model", config, by_hand, read);
  if (read.count("model.depth") && m.preset == trainer::Preset::resnet &&
      !trainer::is_resnet_depth(m.depth))
    r.error("depth", "preset resnet has no depth " + std::to_string(m.depth) + "; it builds " +
                         trainer::resnet_depths_text());
  places.preset = r.where("preset");
  places.layers = r.where("layers");
  return r.diagnostics().error_count() == problems_before;
}

void read_training(MapReader r, trainer::TrainConfig& config) {
  ReadKeys read;
  read_section(r, "training", config, nullptr, read);
  const trainer::ScheduleSpec& s = config.training.schedule;
  if (read.count("training.schedule.milestones")) {
    for (std::size_t i = 1; i < s.milestones.size(); ++i)
      if (s.milestones[i] <= s.milestones[i - 1]) {
        r.section("schedule")
            .error("milestones", "must be increasing epochs, got " +
                                     std::to_string(s.milestones[i - 1]) + " then " +
                                     std::to_string(s.milestones[i]));
        break;
      }
  }
  if (s.type == trainer::ScheduleType::multistep && s.milestones.empty())
    r.section("schedule").error("type", "schedule multistep needs milestones: [epoch, ...]");
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
  const bool data_read = read_data(top.section("data"), out, options);
  ModelPlaces model_places;
  const bool model_read = read_model(top.section("model"), out, top.tree(), model_places);
  read_training(top.section("training"), out);
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
