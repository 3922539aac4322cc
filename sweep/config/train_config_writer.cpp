/*
 * train_config_writer.cpp — field by field, in trainer/train_config.h's order. Numbers go through
 * format_number (shortest round-trip text) so 0.1 is written as 0.1.
 */
#include "sweep/config/train_config_writer.h"

#include "sweep/config/yaml_tree.h"

namespace sweep::config {

namespace {

YAML::Node num(double v) { return YAML::Node(format_number(v)); }
YAML::Node whole(std::int64_t v) { return YAML::Node(std::to_string(v)); }
YAML::Node whole_u(std::uint64_t v) { return YAML::Node(std::to_string(v)); }
YAML::Node flag(bool v) { return YAML::Node(v ? "true" : "false"); }

YAML::Node int_list(const std::vector<int>& values) {
  YAML::Node list(YAML::NodeType::Sequence);
  for (int v : values) list.push_back(whole(v));
  list.SetStyle(YAML::EmitterStyle::Flow);
  return list;
}

template <class E>
YAML::Node word(E value) {
  return YAML::Node(std::string(trainer::name_of(value)));
}

YAML::Node layer_node(const trainer::LayerSpec& layer) {
  YAML::Node item(YAML::NodeType::Map);
  const std::string type(trainer::name_of(layer.type));
  if (layer.num.empty() && layer.str.empty() && layer.layers.empty()) return YAML::Node(type);
  const trainer::LayerDef& def = trainer::layer_def(layer.type);
  YAML::Node args(YAML::NodeType::Map);
  for (const auto& [name, value] : layer.num) {
    const trainer::LayerArg* arg = trainer::find_arg(def, name);
    if (arg && arg->kind == trainer::ArgKind::boolean) {
      args[name] = flag(value != 0);
    } else {
      args[name] = num(value);
    }
  }
  for (const auto& [name, value] : layer.str) args[name] = value;
  if (!layer.layers.empty()) {  // a residual block's own layers
    YAML::Node layers(YAML::NodeType::Sequence);
    for (const trainer::LayerSpec& inner : layer.layers) layers.push_back(layer_node(inner));
    args["layers"] = layers;
  }
  args.SetStyle(YAML::EmitterStyle::Flow);
  item[type] = args;
  item.SetStyle(YAML::EmitterStyle::Flow);
  return item;
}

}  // namespace

YAML::Node to_yaml(const trainer::TrainConfig& config) {
  YAML::Node root(YAML::NodeType::Map);

  const trainer::DataSpec& d = config.data;
  YAML::Node data(YAML::NodeType::Map);
  data["dataset"] = word(d.dataset);
  data["path"] = d.path;
  data["validation"] = word(d.validation);
  data["holdout_fraction"] = num(d.holdout_fraction);
  data["train_limit"] = whole(d.train_limit);
  data["test_limit"] = whole(d.test_limit);
  data["shuffle"] = word(d.shuffle);
  data["normalize"] = flag(d.normalize);
  YAML::Node augment(YAML::NodeType::Map);
  augment["flip"] = flag(d.augment.flip);
  augment["translate"] = whole(d.augment.translate);
  augment["crop_padding"] = whole(d.augment.crop_padding);
  data["augment"] = augment;
  if (d.dataset == trainer::DatasetKind::synthetic) {
    YAML::Node synthetic(YAML::NodeType::Map);
    synthetic["train_size"] = whole(d.synthetic.train_size);
    synthetic["test_size"] = whole(d.synthetic.test_size);
    synthetic["classes"] = whole(d.synthetic.classes);
    synthetic["channels"] = whole(d.synthetic.channels);
    synthetic["height"] = whole(d.synthetic.height);
    synthetic["width"] = whole(d.synthetic.width);
    synthetic["seed"] = whole_u(d.synthetic.seed);
    data["synthetic"] = synthetic;
  }
  // Written where they apply or differ from their defaults, so that a built-in data set's written
  // config stays as it was.
  if (!d.validation_path.empty()) data["validation_path"] = d.validation_path;
  if (d.task != trainer::Task::classification) data["task"] = word(d.task);
  if (d.dataset == trainer::DatasetKind::numpy || d.layout != trainer::Layout::nchw)
    data["layout"] = word(d.layout);
  if (d.dataset == trainer::DatasetKind::csv || d.label != "label") data["label"] = d.label;
  if (d.dataset == trainer::DatasetKind::folder) {
    const trainer::FolderSpec& f = d.folder;
    if (f.channels != 0) data["channels"] = whole(f.channels);
    if (f.height != 0) {
      YAML::Node size = int_list({f.height, f.width});
      size.SetStyle(YAML::EmitterStyle::Flow);
      data["image_size"] = size;
    }
    data["resize"] = word(f.resize);
    data["on_bad_file"] = word(f.on_bad_file);
    if (!f.cache_dir.empty()) data["cache_dir"] = f.cache_dir;
  }
  if (!d.feature_columns.empty()) {
    YAML::Node columns(YAML::NodeType::Sequence);
    for (const std::string& c : d.feature_columns) columns.push_back(c);
    columns.SetStyle(YAML::EmitterStyle::Flow);
    data["feature_columns"] = columns;
  }
  root["data"] = data;

  const trainer::ModelSpec& m = config.model;
  YAML::Node model(YAML::NodeType::Map);
  if (m.layers.empty()) {
    model["preset"] = word(m.preset);
    model["net_width"] = whole(m.net_width);
    model["block_depth"] = whole(m.block_depth);
    model["depth"] = whole(m.depth);
    model["width"] = whole(m.width);
    model["hidden"] = int_list(m.hidden);
    model["dropout"] = num(m.dropout);
  } else {
    YAML::Node layers(YAML::NodeType::Sequence);
    for (const trainer::LayerSpec& layer : m.layers) layers.push_back(layer_node(layer));
    model["layers"] = layers;
  }
  root["model"] = model;

  const trainer::TrainingSpec& t = config.training;
  YAML::Node training(YAML::NodeType::Map);
  training["optimizer"] = word(t.optimizer);
  training["learning_rate"] = num(t.learning_rate);
  training["momentum"] = num(t.momentum);
  training["nesterov"] = flag(t.nesterov);
  training["beta1"] = num(t.beta1);
  training["beta2"] = num(t.beta2);
  training["epsilon"] = num(t.epsilon);
  training["rms_decay"] = num(t.rms_decay);
  training["weight_decay"] = num(t.weight_decay);
  training["gradient_clip"] = num(t.gradient_clip);
  training["batch_size"] = whole(t.batch_size);
  training["epochs"] = whole(t.epochs);
  YAML::Node schedule(YAML::NodeType::Map);
  schedule["type"] = word(t.schedule.type);
  schedule["drop_factor"] = num(t.schedule.drop_factor);
  schedule["drop_period"] = whole(t.schedule.drop_period);
  schedule["milestones"] = int_list(t.schedule.milestones);
  schedule["gamma"] = num(t.schedule.gamma);
  schedule["power"] = num(t.schedule.power);
  schedule["min_lr"] = num(t.schedule.min_lr);
  schedule["warmup_epochs"] = num(t.schedule.warmup_epochs);
  schedule["warmup_start_factor"] = num(t.schedule.warmup_start_factor);
  training["schedule"] = schedule;
  training["validation_frequency"] = whole(t.validation_frequency);
  training["log_every"] = whole(t.log_every);
  YAML::Node early(YAML::NodeType::Map);
  early["patience"] = whole(t.early_stopping.patience);
  early["monitor"] = word(t.early_stopping.monitor);
  early["min_delta"] = num(t.early_stopping.min_delta);
  training["early_stopping"] = early;
  training["output_network"] = word(t.output_network);
  training["seed"] = whole_u(t.seed);
  training["precision"] = word(t.precision);
  training["deterministic"] = flag(t.deterministic);
  // Only when off: a default config's text, and so its trials' identities, stay what they were.
  if (!t.save_model) training["save_model"] = flag(false);
  YAML::Node checkpoint(YAML::NodeType::Map);
  checkpoint["every_epochs"] = whole(t.checkpoint.every_epochs);
  training["checkpoint"] = checkpoint;
  root["training"] = training;
  return root;
}

}  // namespace sweep::config
