/*
 * layers_reader.cpp — one table row per layer type: its arguments, which are required, and which
 * one a scalar shorthand fills. Adding a layer type is adding a row.
 */
#include "sweep/config/layers_reader.h"

#include <algorithm>

#include "sweep/config/suggest.h"

namespace sweep::config {

namespace {

enum class ArgKind { positive_int, non_negative_int, rate, boolean, padding };

struct ArgDef {
  const char* name;
  ArgKind kind;
  bool required;
};

struct LayerDef {
  const char* type;
  std::vector<ArgDef> args;
  const char* shorthand;  // argument a scalar fills ("" = none: the layer needs a map or nothing)
};

const std::vector<LayerDef>& layer_defs() {
  static const std::vector<LayerDef> defs = {
      {"conv",
       {{"filters", ArgKind::positive_int, true},
        {"kernel", ArgKind::positive_int, true},
        {"stride", ArgKind::positive_int, false},
        {"padding", ArgKind::padding, false},
        {"bias", ArgKind::boolean, false}},
       ""},
      {"batchnorm", {}, ""},
      {"relu", {}, ""},
      {"maxpool",
       {{"size", ArgKind::positive_int, false},
        {"stride", ArgKind::positive_int, false},
        {"padding", ArgKind::non_negative_int, false}},
       "size"},
      {"avgpool",
       {{"size", ArgKind::positive_int, false},
        {"stride", ArgKind::positive_int, false},
        {"padding", ArgKind::non_negative_int, false}},
       "size"},
      {"gap", {}, ""},
      {"dense",
       {{"units", ArgKind::positive_int, true}, {"bias", ArgKind::boolean, false}},
       "units"},
      {"dropout", {{"rate", ArgKind::rate, false}}, "rate"},
      {"flatten", {}, ""},
  };
  return defs;
}

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (const LayerDef& def : layer_defs()) names.emplace_back(def.type);
  return names;
}

class LayerReader {
 public:
  LayerReader(const ConfigTree& tree, Diagnostics& diagnostics)
      : tree_(tree), diagnostics_(diagnostics) {}

  void error(const std::string& path, const YAML::Node& node, const std::string& text) {
    diagnostics_.error(tree_.where(path, node), path, text);
  }

  // Parses one argument value into `layer`; false (with a message) when it is invalid.
  void read_arg(const ArgDef& arg, const YAML::Node& value, const std::string& path,
                trainer::LayerSpec& layer) {
    switch (arg.kind) {
      case ArgKind::positive_int:
      case ArgKind::non_negative_int: {
        std::int64_t n = 0;
        const std::int64_t lowest = arg.kind == ArgKind::positive_int ? 1 : 0;
        if (auto problem = read_integer(value, n)) return error(path, value, *problem);
        if (n < lowest)
          return error(path, value,
                       "must be >= " + std::to_string(lowest) + ", got " + value.Scalar());
        layer.num[arg.name] = static_cast<double>(n);
        return;
      }
      case ArgKind::rate: {
        double rate = 0;
        if (auto problem = read_number(value, rate)) return error(path, value, *problem);
        if (rate < 0 || rate >= 1)
          return error(path, value, "must be in [0, 1), got " + value.Scalar());
        layer.num[arg.name] = rate;
        return;
      }
      case ArgKind::boolean: {
        bool flag = false;
        if (auto problem = read_bool(value, flag)) return error(path, value, *problem);
        layer.num[arg.name] = flag ? 1.0 : 0.0;
        return;
      }
      case ArgKind::padding: {
        if (value.IsScalar() && value.Scalar() == "same") {
          layer.str[arg.name] = "same";
          return;
        }
        std::int64_t n = 0;
        if (read_integer(value, n) || n < 0)
          return error(path, value,
                       "expected 'same' or a number >= 0, got " + describe_node(value));
        layer.num[arg.name] = static_cast<double>(n);
        return;
      }
    }
  }

  void read_item(const YAML::Node& item, const std::string& path,
                 std::vector<trainer::LayerSpec>& out) {
    std::string type;
    YAML::Node args(YAML::NodeType::Undefined);
    YAML::Node type_node;
    type_node.reset(item);
    if (item.IsScalar()) {
      type = item.Scalar();
    } else if (item.IsMap() && item.size() == 1) {
      const auto entry = *item.begin();
      type = entry.first.Scalar();
      type_node.reset(entry.first);
      args.reset(entry.second);
    } else {
      return error(path, item,
                   "expected a layer like '- relu', '- maxpool: 2' or "
                   "'- conv: {filters: 20, kernel: 5}', got " +
                       describe_node(item) +
                       (item.IsMap() ? " with " + std::to_string(item.size()) + " keys" : ""));
    }
    const auto def = std::find_if(layer_defs().begin(), layer_defs().end(),
                                  [&](const LayerDef& d) { return type == d.type; });
    if (def == layer_defs().end())
      return error(
          path, type_node,
          "unknown layer type '" + type + "'" + suggestion_suffix(type, layer_type_names()));

    trainer::LayerSpec layer;
    layer.type = type;
    const std::string args_path = path + "." + type;
    bool has_args = args.IsDefined() && !args.IsNull();
    if (has_args && args.IsScalar()) {
      if (std::string(def->shorthand).empty()) {
        std::string needs;
        for (const ArgDef& a : def->args)
          needs += std::string(needs.empty() ? "" : ", ") + a.name + ": N";
        return error(args_path, args,
                     def->args.empty() ? "'" + type + "' takes no arguments"
                                       : "'" + type + "' needs a map: {" + needs + "}");
      }
      const ArgDef& arg = *std::find_if(def->args.begin(), def->args.end(), [&](const ArgDef& a) {
        return std::string(a.name) == def->shorthand;
      });
      read_arg(arg, args, args_path, layer);
    } else if (has_args && args.IsMap()) {
      for (const auto& entry : args) {
        const std::string name = entry.first.Scalar();
        const auto arg = std::find_if(def->args.begin(), def->args.end(),
                                      [&](const ArgDef& a) { return name == a.name; });
        if (arg == def->args.end()) {
          std::vector<std::string> names;
          for (const ArgDef& a : def->args) names.emplace_back(a.name);
          error(args_path + "." + name, entry.first,
                names.empty() ? "'" + type + "' takes no arguments"
                              : "unknown argument of " + type + suggestion_suffix(name, names));
          continue;
        }
        read_arg(*arg, entry.second, args_path + "." + name, layer);
      }
    } else if (has_args) {
      return error(args_path, args, "expected a number or a map of arguments, got a list");
    }
    for (const ArgDef& arg : def->args) {
      const bool given = layer.num.count(arg.name) || layer.str.count(arg.name);
      const YAML::Node& lookup = args;  // const: the lookup must not add the key
      const bool mentioned = has_args && args.IsMap() && lookup[arg.name];
      if (arg.required && !given && !mentioned)
        error(args_path, has_args ? args : type_node, "'" + type + "' needs '" + arg.name + "'");
    }
    out.push_back(std::move(layer));
  }

 private:
  const ConfigTree& tree_;
  Diagnostics& diagnostics_;
};

}  // namespace

void read_layers(const ConfigTree& tree, Diagnostics& diagnostics, const YAML::Node& list,
                 const std::string& path, std::vector<trainer::LayerSpec>& out) {
  LayerReader reader(tree, diagnostics);
  if (!list.IsSequence()) {
    reader.error(path, list, "expected a list of layers, got " + describe_node(list));
    return;
  }
  if (list.size() == 0) {
    reader.error(path, list, "the list of layers is empty");
    return;
  }
  out.clear();
  for (std::size_t i = 0; i < list.size(); ++i)
    reader.read_item(list[i], path + "." + std::to_string(i), out);
}

}  // namespace sweep::config
