/*
 * layer_table.h — every layer type and every argument it takes, in one table.
 *
 * One row per type: its arguments, each with its kind, whether it is required and its default,
 * and the argument a scalar fills in YAML's shorthand (`- maxpool: 2`). The trainer builds layers
 * from it (models.cpp) and the YAML reader reads `model.layers` from it (sweep/config), so an
 * argument exists, is checked and has its default in exactly one place. Adding a layer type is a
 * row here plus its Layer class.
 *
 *   const LayerDef& conv = layer_def(LayerKind::conv);
 *   for (const LayerArg& a : conv.args) std::cout << a.name << (a.required ? " (required)" : "");
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::trainer {

enum class LayerKind {
  conv,
  batchnorm,
  relu,
  maxpool,
  avgpool,
  gap,
  dense,
  dropout,
  flatten,
  residual
};

enum class ArgKind {
  positive_int,      // >= 1
  non_negative_int,  // >= 0
  rate,              // in [0, 1)
  fraction,          // in [0, 1]
  positive_real,     // > 0
  boolean,           // true / false (stored as 1 / 0)
  padding,           // "same", "valid" or an integer >= 0
  activation,        // a word of Activation (trainer/vocabulary.h), kept in LayerSpec::str
  layers,            // a list of layers, kept in LayerSpec::layers
};

struct LayerArg {
  std::string_view name;
  ArgKind kind;
  bool required = false;
  double fallback = 0;            // the default when not required and not given...
  std::string_view fallback_arg;  // ...or the value of this other argument (pool stride = size)
  std::string_view fallback_word = {};  // the default of a word argument (activation: relu)
};

struct LayerDef {
  LayerKind kind;
  std::string_view name;  // the YAML word: conv, maxpool, ...
  std::vector<LayerArg> args;
  std::string_view shorthand;  // the argument a scalar (or, for `layers`, a list) fills; "" = none
  std::string_view what;       // one line for docs and messages
};

// Every layer type, in the order docs/models.md lists them.
const std::vector<LayerDef>& layer_table();
const LayerDef& layer_def(LayerKind kind);
// The row of a YAML word, or nullptr.
const LayerDef* find_layer(std::string_view name);
// The argument `name` of `def`, or nullptr.
const LayerArg* find_arg(const LayerDef& def, std::string_view name);
std::string_view name_of(LayerKind kind);
std::vector<std::string> layer_type_names();

// Why `value` is not a valid value of `arg` ("must be >= 1, got 0"), or nullopt.
std::optional<std::string> check_arg_value(const LayerArg& arg, double value);
// "must be >= 1", "in [0, 1)": what an argument kind allows.
std::string describe(ArgKind kind);

}  // namespace sweep::trainer
