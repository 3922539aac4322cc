/*
 * layers_reader.cpp — `model.layers` read against the trainer's layer table
 * (trainer/layer_table.h): the types, their arguments, which are required and the shorthand all
 * come from there, so the YAML side cannot accept or refuse an argument the trainer does not. A
 * residual block's `layers` is read by the same code, one level down (its items' keys are
 * model.layers.N.residual.layers.M, as the YAML nests them).
 */
#include "sweep/config/layers_reader.h"

#include <algorithm>
#include <cmath>

#include "sweep/config/suggest.h"
#include "trainer/layer_table.h"

namespace sweep::config {

namespace {

using trainer::ArgKind;
using trainer::LayerArg;
using trainer::LayerDef;

class LayerReader {
 public:
  LayerReader(const ConfigTree& tree, Diagnostics& diagnostics)
      : tree_(tree), diagnostics_(diagnostics) {}

  void error(const std::string& path, const YAML::Node& node, const std::string& text) {
    diagnostics_.error(tree_.where(path, node), path, text);
  }

  // Parses one argument value into `layer` (a block's layers: their places into `place`), or
  // reports why it is invalid.
  void read_arg(const LayerArg& arg, const YAML::Node& value, const std::string& path,
                trainer::LayerSpec& layer, LayerPlace& place) {
    const std::string name(arg.name);
    double number = 0;
    switch (arg.kind) {
      case ArgKind::positive_int:
      case ArgKind::non_negative_int: {
        std::int64_t n = 0;
        if (auto problem = read_integer(value, n)) return error(path, value, *problem);
        number = static_cast<double>(n);
        break;
      }
      case ArgKind::rate:
      case ArgKind::fraction:
      case ArgKind::positive_real:
        if (auto problem = read_number(value, number)) return error(path, value, *problem);
        break;
      case ArgKind::boolean: {
        bool flag = false;
        if (auto problem = read_bool(value, flag)) return error(path, value, *problem);
        number = flag ? 1.0 : 0.0;
        break;
      }
      case ArgKind::activation: {
        const std::vector<std::string> words = trainer::word_list<trainer::Activation>();
        if (!value.IsScalar())
          return error(path, value,
                       "expected one of " + join(words) + ", got " + describe_node(value));
        if (!trainer::parse_word<trainer::Activation>(value.Scalar()))
          return error(path, value,
                       "unknown activation '" + value.Scalar() + "'" +
                           suggestion_suffix(value.Scalar(), words));
        layer.str[name] = value.Scalar();
        return;
      }
      case ArgKind::layers:
        read_list(value, path, layer.layers, place.layers);
        return;
      case ArgKind::padding: {
        if (value.IsScalar() && (value.Scalar() == "same" || value.Scalar() == "valid")) {
          layer.str[name] = value.Scalar();
          return;
        }
        std::int64_t n = 0;
        if (read_integer(value, n) || n < 0)
          return error(path, value,
                       "expected 'same', 'valid' or a number >= 0, got " + describe_node(value));
        number = static_cast<double>(n);
        break;
      }
    }
    if (auto problem = trainer::check_arg_value(arg, number)) return error(path, value, *problem);
    layer.num[name] = number;
  }

  void read_item(const YAML::Node& item, const std::string& path,
                 std::vector<trainer::LayerSpec>& out, std::vector<LayerPlace>& places) {
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
    const LayerDef* def = trainer::find_layer(type);
    if (!def)
      return error(path, type_node,
                   "unknown layer type '" + type + "'" +
                       suggestion_suffix(type, trainer::layer_type_names()));

    trainer::LayerSpec layer;
    layer.type = def->kind;
    LayerPlace place{path, tree_.where(path, item), {}};
    const std::string args_path = path + "." + type;
    bool has_args = args.IsDefined() && !args.IsNull();
    if (has_args && args.IsScalar()) {
      if (def->shorthand.empty()) {
        std::string needs;
        for (const LayerArg& a : def->args)
          needs += (needs.empty() ? "" : ", ") + std::string(a.name) + ": N";
        return error(args_path, args,
                     def->args.empty() ? "'" + type + "' takes no arguments"
                                       : "'" + type + "' needs a map: {" + needs + "}");
      }
      read_arg(*trainer::find_arg(*def, def->shorthand), args, args_path, layer, place);
    } else if (has_args && args.IsMap()) {
      for (const auto& entry : args) {
        const std::string name = entry.first.Scalar();
        const LayerArg* arg = trainer::find_arg(*def, name);
        if (!arg) {
          std::vector<std::string> names;
          for (const LayerArg& a : def->args) names.emplace_back(a.name);
          error(args_path + "." + name, entry.first,
                names.empty() ? "'" + type + "' takes no arguments"
                              : "unknown argument of " + type + suggestion_suffix(name, names));
          continue;
        }
        read_arg(*arg, entry.second, args_path + "." + name, layer, place);
      }
    } else if (has_args && list_shorthand(*def)) {  // `- residual: [conv: ..., relu]`
      read_arg(*trainer::find_arg(*def, def->shorthand), args, args_path, layer, place);
    } else if (has_args) {
      return error(args_path, args, "expected a number or a map of arguments, got a list");
    }
    for (const LayerArg& arg : def->args) {
      const std::string name(arg.name);
      const bool given = arg.kind == ArgKind::layers
                             ? !layer.layers.empty()
                             : layer.num.count(name) || layer.str.count(name);
      const YAML::Node& lookup = args;  // const: the lookup must not add the key
      // Given but invalid (reported above): in the map, or as the shorthand's value.
      const bool mentioned =
          has_args && (args.IsMap() ? bool(lookup[name]) : arg.name == def->shorthand);
      if (arg.required && !given && !mentioned)
        error(args_path, has_args ? args : type_node, "'" + type + "' needs '" + name + "'");
    }
    out.push_back(std::move(layer));
    places.push_back(std::move(place));
  }

  // The list at `path` (model.layers, or a residual block's layers) into `out` and `places`.
  void read_list(const YAML::Node& list, const std::string& path,
                 std::vector<trainer::LayerSpec>& out, std::vector<LayerPlace>& places) {
    if (!list.IsSequence())
      return error(path, list, "expected a list of layers, got " + describe_node(list));
    if (list.size() == 0) return error(path, list, "the list of layers is empty");
    out.clear();
    places.clear();
    for (std::size_t i = 0; i < list.size(); ++i)
      read_item(list[i], path + "." + std::to_string(i), out, places);
  }

 private:
  // Whether a YAML list after the type fills the row's shorthand (a residual block's layers).
  static bool list_shorthand(const LayerDef& def) {
    const LayerArg* arg = def.shorthand.empty() ? nullptr : trainer::find_arg(def, def.shorthand);
    return arg && arg->kind == ArgKind::layers;
  }

  const ConfigTree& tree_;
  Diagnostics& diagnostics_;
};

}  // namespace

void read_layers(const ConfigTree& tree, Diagnostics& diagnostics, const YAML::Node& list,
                 const std::string& path, std::vector<trainer::LayerSpec>& out,
                 std::vector<LayerPlace>& places) {
  LayerReader(tree, diagnostics).read_list(list, path, out, places);
}

}  // namespace sweep::config
