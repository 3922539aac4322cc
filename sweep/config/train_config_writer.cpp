/*
 * train_config_writer.cpp — key by key of the key table (trainer/config_keys.h), in its order,
 * each where its row says it is written. Numbers go through format_number (shortest round-trip
 * text) so 0.1 is written as 0.1.
 */
#include "sweep/config/train_config_writer.h"

#include <algorithm>
#include <variant>

#include "sweep/config/yaml_tree.h"
#include "trainer/config_keys.h"

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

// A key's value as the reader reads it back (trainer/config_keys.h gives its field and type).
YAML::Node value_node(const trainer::ConfigKey& key, trainer::TrainConfig& config) {
  return std::visit(
      trainer::Overloaded{
          [&](std::monostate) {  // the keys written by hand
            YAML::Node list(YAML::NodeType::Sequence);
            if (key.name == "image_size")
              return int_list({config.data.folder.height, config.data.folder.width});
            for (const trainer::LayerSpec& layer : config.model.layers)
              list.push_back(layer_node(layer));
            return list;
          },
          [](double* v) { return num(*v); }, [](int* v) { return whole(*v); },
          [](std::int64_t* v) { return whole(*v); }, [](std::uint64_t* v) { return whole_u(*v); },
          [](bool* v) { return flag(*v); }, [](std::string* v) { return YAML::Node(*v); },
          [](std::vector<int>* v) { return int_list(*v); },
          [](std::vector<std::string>* v) {
            YAML::Node list(YAML::NodeType::Sequence);
            for (const std::string& item : *v) list.push_back(item);
            list.SetStyle(YAML::EmitterStyle::Flow);
            return list;
          },
          [](const trainer::WordField& w) { return YAML::Node(std::string(w.get(w.value))); }},
      key.field(config));
}

// The keys of `section` the table writes for `config` (each row's `written`), in its order, each
// subsection where its first key stands (left out when it writes nothing).
YAML::Node section_node(const std::string& section, trainer::TrainConfig& config) {
  YAML::Node node(YAML::NodeType::Map);
  std::vector<std::string> subsections;
  for (const trainer::ConfigKey& key : trainer::config_keys()) {
    if (key.section == section) {
      if (key.folder_only && config.data.dataset != trainer::DatasetKind::folder) continue;
      if (key.written && !key.written(config)) continue;
      node[std::string(key.name)] = value_node(key, config);
    } else if (key.section.starts_with(section + ".")) {
      const std::string rest(key.section.substr(section.size() + 1));
      const std::string child = rest.substr(0, rest.find('.'));
      if (std::find(subsections.begin(), subsections.end(), child) != subsections.end()) continue;
      subsections.push_back(child);
      YAML::Node sub = section_node(section + "." + child, config);
      if (sub.size() > 0) node[child] = sub;
    }
  }
  return node;
}

}  // namespace

YAML::Node to_yaml(const trainer::TrainConfig& config) {
  trainer::TrainConfig copy = config;  // the table's fields are pointers into a config
  YAML::Node root(YAML::NodeType::Map);
  for (const char* section : {"data", "model", "training"})
    root[section] = section_node(section, copy);
  return root;
}

}  // namespace sweep::config
