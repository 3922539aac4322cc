/*
 * config_keys.cpp — the rows of the key table, and the checks and texts read from them.
 *
 * Ranges are what a run can train with: a rate in [0, 1), a step size > 0, counts >= 1. The
 * order of the rows is the order the writer writes the keys in, which a trial's identity (the
 * hash of its config's text) depends on: a new key goes where it belongs in the docs, and one
 * written only when it differs from its default leaves existing configs' text as it was.
 */
#include "trainer/config_keys.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "common/check.h"
#include "common/format.h"
#include "trainer/data/image_decode.h"
#include "trainer/models.h"

namespace sweep::trainer {

namespace {

template <class T>
KeyField field_of(T& value) {
  if constexpr (std::is_enum_v<T>)
    return WordField::of(value);
  else
    return &value;
}

// The field `member` of a TrainConfig, as a KeyField (a row's `field`).
#define SWEEP_FIELD(member) [](TrainConfig& c) -> KeyField { return field_of(c.member); }

ConfigKey key(std::string_view section, std::string_view name, KeyField (*field)(TrainConfig&),
              Range range, std::string_view what) {
  ConfigKey k{};
  k.section = section;
  k.name = name;
  k.field = field;
  k.range = range;
  k.what = what;
  return k;
}

bool is_synthetic(const TrainConfig& c) { return c.data.dataset == DatasetKind::synthetic; }
bool no_layers(const TrainConfig& c) { return c.model.layers.empty(); }

std::vector<ConfigKey> data_keys() {
  const Range any = Range::any();
  return {
      key("data", "dataset", SWEEP_FIELD(data.dataset), any,
          "the data set: a built-in one, synthetic, or your own (numpy, csv, folder)")
          .called("data set"),
      key("data", "path", SWEEP_FIELD(data.path), any, "where the data set is")
          .hand_read()
          .shown("per data set"),
      key("data", "validation", SWEEP_FIELD(data.validation), any,
          "what validates: the test split, a holdout of the training set, or nothing")
          .called("validation source"),
      key("data", "holdout_fraction", SWEEP_FIELD(data.holdout_fraction), Range::open(0, 1),
          "the share held out for validation: holdout"),
      key("data", "train_limit", SWEEP_FIELD(data.train_limit), Range::at_least(0),
          "use only the first N training samples (0 = all)"),
      key("data", "test_limit", SWEEP_FIELD(data.test_limit), Range::at_least(0),
          "use only the first N test samples (0 = all)"),
      key("data", "shuffle", SWEEP_FIELD(data.shuffle), any, "when the training set is shuffled")
          .called("shuffle mode"),
      key("data", "normalize", SWEEP_FIELD(data.normalize), any,
          "per-channel mean / std from the training set"),
      key("data.augment", "flip", SWEEP_FIELD(data.augment.flip), any, "random horizontal flip"),
      key("data.augment", "translate", SWEEP_FIELD(data.augment.translate), Range::closed(0, 64),
          "random shift by up to N pixels (zeros come in)"),
      key("data.augment", "crop_padding", SWEEP_FIELD(data.augment.crop_padding),
          Range::closed(0, 64), "pad by N, random crop back"),
      key("data.synthetic", "train_size", SWEEP_FIELD(data.synthetic.train_size),
          Range::at_least(1), "synthetic training samples")
          .when(is_synthetic),
      key("data.synthetic", "test_size", SWEEP_FIELD(data.synthetic.test_size), Range::at_least(1),
          "synthetic test samples")
          .when(is_synthetic),
      key("data.synthetic", "classes", SWEEP_FIELD(data.synthetic.classes), Range::at_least(2),
          "synthetic classes")
          .when(is_synthetic),
      key("data.synthetic", "channels", SWEEP_FIELD(data.synthetic.channels), Range::closed(1, 4),
          "synthetic image channels")
          .when(is_synthetic),
      key("data.synthetic", "height", SWEEP_FIELD(data.synthetic.height), Range::at_least(1),
          "synthetic image height")
          .when(is_synthetic),
      key("data.synthetic", "width", SWEEP_FIELD(data.synthetic.width), Range::at_least(1),
          "synthetic image width")
          .when(is_synthetic),
      key("data.synthetic", "seed", SWEEP_FIELD(data.synthetic.seed), Range::at_least(0),
          "the synthetic set's seed")
          .when(is_synthetic),
      key("data", "validation_path", SWEEP_FIELD(data.validation_path), any,
          "folder or csv: the validation set's folder or file (validation: test)")
          .when([](const TrainConfig& c) { return !c.data.validation_path.empty(); }),
      key("data", "task", SWEEP_FIELD(data.task), any, "numpy, csv: class labels or float targets")
          .called("task")
          .when([](const TrainConfig& c) { return c.data.task != Task::classification; }),
      key("data", "layout", SWEEP_FIELD(data.layout), any, "numpy: the axes of a 4-D x")
          .called("layout")
          .when([](const TrainConfig& c) {
            return c.data.dataset == DatasetKind::numpy || c.data.layout != Layout::nchw;
          }),
      key("data", "label", SWEEP_FIELD(data.label), any, "csv: the label column")
          .when([](const TrainConfig& c) {
            return c.data.dataset == DatasetKind::csv || c.data.label != "label";
          }),
      key("data", "channels", SWEEP_FIELD(data.folder.channels), Range::closed(1, 3),
          "folder: 1 (grey) or 3 (RGB)")
          .for_folder()
          .shown("from the files")
          .when([](const TrainConfig& c) { return c.data.folder.channels != 0; }),
      key(
          "data", "image_size", [](TrainConfig&) -> KeyField { return {}; },
          Range::closed(1, kMaxImageSide), "folder: [height, width] the images are brought to")
          .for_folder()
          .hand_read()
          .shown("as the files")
          .when([](const TrainConfig& c) { return c.data.folder.height != 0; }),
      key("data", "resize", SWEEP_FIELD(data.folder.resize), any,
          "folder: how images reach image_size")
          .called("resize mode")
          .for_folder(),
      key("data", "on_bad_file", SWEEP_FIELD(data.folder.on_bad_file), any,
          "folder: an undecodable file stops the run or is left out")
          .called("on_bad_file")
          .for_folder(),
      key("data", "cache_dir", SWEEP_FIELD(data.folder.cache_dir), any,
          "folder: where decoded images are kept")
          .for_folder()
          .shown("$SWEEP_HOME/cache/folders")
          .when([](const TrainConfig& c) { return !c.data.folder.cache_dir.empty(); }),
      key("data", "feature_columns", SWEEP_FIELD(data.feature_columns), any,
          "csv: the feature columns (empty: all but label)")
          .when([](const TrainConfig& c) { return !c.data.feature_columns.empty(); }),
  };
}

std::vector<ConfigKey> model_keys() {
  const Range any = Range::any();
  return {
      key("model", "preset", SWEEP_FIELD(model.preset), any,
          "lenet (Caffe's), convnet (MATLAB's CIFAR-10 example), mlp, resnet; empty: model.layers")
          .called("preset")
          .hand_read()
          .when(no_layers),
      key("model", "net_width", SWEEP_FIELD(model.net_width), Range::at_least(1),
          "convnet: filters of the first block")
          .when(no_layers),
      key("model", "block_depth", SWEEP_FIELD(model.block_depth), Range::at_least(1),
          "convnet: [conv, bn, relu] per block")
          .when(no_layers),
      key("model", "depth", SWEEP_FIELD(model.depth), Range::at_least(1),
          "resnet: 6n+2 (20, 32, 44, 56, 110), or 18, 34")
          .when(no_layers),
      key("model", "width", SWEEP_FIELD(model.width), Range::closed(1, kMaxResNetWidth),
          "resnet: widening factor")
          .when(no_layers),
      key("model", "hidden", SWEEP_FIELD(model.hidden), Range::at_least(1), "mlp: hidden sizes")
          .when(no_layers),
      key("model", "dropout", SWEEP_FIELD(model.dropout), Range::half_open(0, 1),
          "mlp: dropout after each hidden layer")
          .when(no_layers),
      key(
          "model", "layers", [](TrainConfig&) -> KeyField { return {}; }, any,
          "a list of layers instead of a preset; a final dense to the classes is appended "
          "when missing")
          .hand_read()
          .shown("none")
          .when([](const TrainConfig& c) { return !c.model.layers.empty(); }),
  };
}

std::vector<ConfigKey> schedule_keys() {
  const Range any = Range::any();
  return {
      key("training.schedule", "type", SWEEP_FIELD(training.schedule.type), any,
          "the learning-rate schedule")
          .called("schedule"),
      key("training.schedule", "drop_factor", SWEEP_FIELD(training.schedule.drop_factor),
          Range::positive(), "piecewise, multistep: the factor of each drop"),
      key("training.schedule", "drop_period", SWEEP_FIELD(training.schedule.drop_period),
          Range::at_least(1), "piecewise: epochs between drops"),
      key("training.schedule", "milestones", SWEEP_FIELD(training.schedule.milestones),
          Range::at_least(1), "multistep: the epochs at which to drop, increasing"),
      key("training.schedule", "gamma", SWEEP_FIELD(training.schedule.gamma), Range::positive(),
          "inv: lr (1 + gamma iter)^-power; exp: lr gamma^epoch"),
      key("training.schedule", "power", SWEEP_FIELD(training.schedule.power), Range::at_least(0),
          "inv, poly: the power"),
      key("training.schedule", "min_lr", SWEEP_FIELD(training.schedule.min_lr), Range::at_least(0),
          "cosine: the floor"),
      key("training.schedule", "warmup_epochs", SWEEP_FIELD(training.schedule.warmup_epochs),
          Range::at_least(0), "linear warm-up over this many epochs"),
      key("training.schedule", "warmup_start_factor",
          SWEEP_FIELD(training.schedule.warmup_start_factor), Range::closed(0, 1),
          "the warm-up starts at this factor of the learning rate"),
  };
}

std::vector<ConfigKey> training_keys() {
  const Range any = Range::any();
  const Range rate = Range::half_open(0, 1);
  std::vector<ConfigKey> keys = {
      key("training", "optimizer", SWEEP_FIELD(training.optimizer), any, "the update rule")
          .called("optimizer"),
      key("training", "learning_rate", SWEEP_FIELD(training.learning_rate), Range::positive(),
          "the step size")
          .also({"base_lr", "initial_learn_rate"}),
      key("training", "momentum", SWEEP_FIELD(training.momentum), rate, "sgdm: momentum"),
      key("training", "nesterov", SWEEP_FIELD(training.nesterov), any,
          "sgdm: Nesterov momentum (needs momentum > 0)"),
      key("training", "beta1", SWEEP_FIELD(training.beta1), rate, "adam: first-moment decay"),
      key("training", "beta2", SWEEP_FIELD(training.beta2), rate, "adam: second-moment decay"),
      key("training", "epsilon", SWEEP_FIELD(training.epsilon), Range::positive(),
          "adam, rmsprop: added to the denominator"),
      key("training", "rms_decay", SWEEP_FIELD(training.rms_decay), rate,
          "rmsprop: squared-gradient decay (alpha)"),
      key("training", "weight_decay", SWEEP_FIELD(training.weight_decay), Range::at_least(0),
          "L2 penalty added to the gradient")
          .also({"l2_regularization"}),
      key("training", "gradient_clip", SWEEP_FIELD(training.gradient_clip), Range::at_least(0),
          "clip the global L2 norm of the gradient to this (0 = off)")
          .also({"gradient_threshold"}),
      key("training", "batch_size", SWEEP_FIELD(training.batch_size), Range::at_least(1),
          "the (global) mini-batch")
          .also({"mini_batch_size"}),
      key("training", "epochs", SWEEP_FIELD(training.epochs), Range::at_least(1),
          "passes over the training set")
          .also({"max_epochs"}),
  };
  for (ConfigKey& k : schedule_keys()) keys.push_back(std::move(k));
  std::vector<ConfigKey> rest = {
      key("training", "validation_frequency", SWEEP_FIELD(training.validation_frequency),
          Range::at_least(0), "iterations between validations (0 = once per epoch)"),
      key("training", "log_every", SWEEP_FIELD(training.log_every), Range::at_least(1),
          "iterations between train-loss reports"),
      key("training.early_stopping", "patience", SWEEP_FIELD(training.early_stopping.patience),
          Range::at_least(0),
          "validations without improvement before stopping (0 = off, as MATLAB's "
          "ValidationPatience Inf)"),
      key("training.early_stopping", "monitor", SWEEP_FIELD(training.early_stopping.monitor), any,
          "the metric early stopping watches (val_accuracy: classification only)")
          .called("metric to monitor"),
      key("training.early_stopping", "min_delta", SWEEP_FIELD(training.early_stopping.min_delta),
          Range::at_least(0), "the least change that counts as an improvement"),
      key("training", "output_network", SWEEP_FIELD(training.output_network), any,
          "the network a run ends with: the best validation's or the last")
          .called("output network"),
      key("training", "seed", SWEEP_FIELD(training.seed), Range::at_least(0),
          "seeds everything random")
          .also({"random_seed"}),
      key("training", "precision", SWEEP_FIELD(training.precision), any,
          "GPU arithmetic: fp32, tf32 or bf16")
          .called("precision"),
      key("training", "deterministic", SWEEP_FIELD(training.deterministic), any,
          "GPU: the same numbers in every run"),
      key("training", "save_model", SWEEP_FIELD(training.save_model), any,
          "keep the trial's trained network (TRIAL_DIR/model.sweepmodel)")
          .when([](const TrainConfig& c) { return !c.training.save_model; }),
      key("training.checkpoint", "every_epochs", SWEEP_FIELD(training.checkpoint.every_epochs),
          Range::at_least(0), "epochs between checkpoints (0 = only when interrupted)"),
  };
  for (ConfigKey& k : rest) keys.push_back(std::move(k));
  return keys;
}

#undef SWEEP_FIELD

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

bool Range::contains(double v) const {
  if (min && (min_inclusive ? v < *min : v <= *min)) return false;
  if (max && (max_inclusive ? v > *max : v >= *max)) return false;
  return true;
}

std::string Range::describe() const {
  if (min && max)
    return "in " + std::string(min_inclusive ? "[" : "(") + shortest(*min) + ", " + shortest(*max) +
           (max_inclusive ? "]" : ")");
  if (min) return std::string(min_inclusive ? ">= " : "> ") + shortest(*min);
  if (max) return std::string(max_inclusive ? "<= " : "< ") + shortest(*max);
  return "any number";
}

std::string ConfigKey::path() const { return std::string(section) + "." + std::string(name); }

ConfigKey ConfigKey::also(std::vector<std::string_view> other_names) const {
  ConfigKey k = *this;
  k.aliases = std::move(other_names);
  return k;
}
ConfigKey ConfigKey::called(std::string_view word_noun) const {
  ConfigKey k = *this;
  k.noun = word_noun;
  return k;
}
ConfigKey ConfigKey::when(bool (*predicate)(const TrainConfig&)) const {
  ConfigKey k = *this;
  k.written = predicate;
  return k;
}
ConfigKey ConfigKey::for_folder() const {
  ConfigKey k = *this;
  k.folder_only = true;
  return k;
}
ConfigKey ConfigKey::hand_read() const {
  ConfigKey k = *this;
  k.by_hand = true;
  return k;
}
ConfigKey ConfigKey::shown(std::string_view docs_default) const {
  ConfigKey k = *this;
  k.shown_default = docs_default;
  return k;
}

const std::vector<ConfigKey>& config_keys() {
  static const std::vector<ConfigKey> table = [] {
    std::vector<ConfigKey> keys = data_keys();
    for (ConfigKey& k : model_keys()) keys.push_back(std::move(k));
    for (ConfigKey& k : training_keys()) keys.push_back(std::move(k));
    return keys;
  }();
  return table;
}

const ConfigKey* find_key(std::string_view path) {
  for (const ConfigKey& k : config_keys())
    if (k.path() == path) return &k;
  return nullptr;
}

std::vector<std::string> key_sections() {
  std::vector<std::string> sections;
  for (const ConfigKey& k : config_keys()) {
    std::string s(k.section);
    // The parents of a nested section first ("training" before "training.schedule").
    for (std::size_t dot = s.find('.'); dot != std::string::npos; dot = s.find('.', dot + 1))
      if (std::find(sections.begin(), sections.end(), s.substr(0, dot)) == sections.end())
        sections.push_back(s.substr(0, dot));
    if (std::find(sections.begin(), sections.end(), s) == sections.end()) sections.push_back(s);
  }
  return sections;
}

std::string default_text(const ConfigKey& key) {
  if (!key.shown_default.empty()) return std::string(key.shown_default);
  TrainConfig defaults;
  return std::visit(
      Overloaded{[](std::monostate) { return std::string(); },
                 [](double* v) { return shortest(*v); }, [](int* v) { return std::to_string(*v); },
                 [](std::int64_t* v) { return std::to_string(*v); },
                 [](std::uint64_t* v) { return std::to_string(*v); },
                 [](bool* v) { return std::string(*v ? "true" : "false"); },
                 [](std::string* v) { return *v; },
                 [](std::vector<int>* v) {
                   std::string out;
                   for (int i : *v) out += (out.empty() ? "" : ", ") + std::to_string(i);
                   return "[" + out + "]";
                 },
                 [](std::vector<std::string>* v) { return "[" + join_words(*v) + "]"; },
                 [](const WordField& w) { return std::string(w.get(w.value)); }},
      key.field(defaults));
}

std::string words_of_key(const ConfigKey& key) {
  TrainConfig scratch;
  const KeyField field = key.field(scratch);
  if (const WordField* w = std::get_if<WordField>(&field)) return join_words(w->words());
  return "";
}

std::optional<std::string> range_problem(const ConfigKey& key, const TrainConfig& config) {
  if (key.by_hand) return std::nullopt;
  TrainConfig copy = config;  // field() hands out pointers into a config it may write
  const auto outside = [&](double v, const std::string& text) -> std::optional<std::string> {
    if (std::isfinite(v) && key.range.contains(v)) return std::nullopt;
    return "must be " + key.range.describe() + ", got " + text;
  };
  return std::visit(
      Overloaded{
          [&](double* v) { return outside(*v, shortest(*v)); },
          [&](int* v) { return outside(*v, std::to_string(*v)); },
          [&](std::int64_t* v) { return outside(static_cast<double>(*v), std::to_string(*v)); },
          [&](std::vector<int>* v) -> std::optional<std::string> {
            for (int i : *v)
              if (auto problem = outside(i, std::to_string(i))) return problem;
            return std::nullopt;
          },
          [](const auto&) -> std::optional<std::string> { return std::nullopt; }},
      key.field(copy));
}

void check_training_keys(const TrainingSpec& spec) {
  TrainConfig config;
  config.training = spec;
  for (const ConfigKey& key : config_keys()) {
    if (!key.section.starts_with("training")) continue;
    if (auto problem = range_problem(key, config))
      throw Error("key '" + key.path() + "': " + *problem);
  }
  if (spec.nesterov && spec.momentum == 0)
    throw Error("key 'training.nesterov': needs momentum > 0");
}

}  // namespace sweep::trainer
