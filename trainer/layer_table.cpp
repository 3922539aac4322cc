/*
 * layer_table.cpp — the rows. Defaults are PyTorch's (batch norm eps 1e-5, momentum 0.1; a
 * pool's stride is its size; bias on); a residual block adds before its ReLU (He et al. 2016).
 */
#include "trainer/layer_table.h"

#include <cmath>

#include "common/format.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

namespace {

LayerArg required(std::string_view name, ArgKind kind) { return {name, kind, true, 0, ""}; }
LayerArg optional(std::string_view name, ArgKind kind, double fallback) {
  return {name, kind, false, fallback, ""};
}
// Absent, it takes the value of argument `other` (a pool's stride is its size).
LayerArg same_as(std::string_view name, ArgKind kind, std::string_view other) {
  return {name, kind, false, 0, other};
}
LayerArg word(std::string_view name, ArgKind kind, std::string_view fallback) {
  return {name, kind, false, 0, "", fallback};
}

}  // namespace

const std::vector<LayerDef>& layer_table() {
  static const std::vector<LayerDef> table = {
      {LayerKind::conv,
       "conv",
       {required("filters", ArgKind::positive_int), required("kernel", ArgKind::positive_int),
        optional("stride", ArgKind::positive_int, 1), optional("padding", ArgKind::padding, 0),
        optional("bias", ArgKind::boolean, 1)},
       "",
       "2-D convolution: filters, kernel, stride, padding (same | valid | N), bias"},
      {LayerKind::batchnorm,
       "batchnorm",
       {optional("eps", ArgKind::positive_real, 1e-5),
        optional("momentum", ArgKind::fraction, 0.1)},
       "",
       "batch normalisation over channels: eps, momentum (PyTorch's)"},
      {LayerKind::relu, "relu", {}, "", "max(0, x)"},
      {LayerKind::maxpool,
       "maxpool",
       {required("size", ArgKind::positive_int), same_as("stride", ArgKind::positive_int, "size"),
        optional("padding", ArgKind::non_negative_int, 0)},
       "size",
       "max pooling: size, stride (default: size), padding"},
      {LayerKind::avgpool,
       "avgpool",
       {required("size", ArgKind::positive_int), same_as("stride", ArgKind::positive_int, "size"),
        optional("padding", ArgKind::non_negative_int, 0)},
       "size",
       "average pooling: size, stride (default: size), padding"},
      {LayerKind::gap, "gap", {}, "", "global average pooling"},
      {LayerKind::dense,
       "dense",
       {required("units", ArgKind::positive_int), optional("bias", ArgKind::boolean, 1)},
       "units",
       "fully connected: units, bias"},
      {LayerKind::dropout, "dropout", {required("rate", ArgKind::rate)}, "rate", "dropout: rate"},
      {LayerKind::flatten, "flatten", {}, "", "to one vector per image"},
      {LayerKind::residual,
       "residual",
       {required("layers", ArgKind::layers), word("activation", ArgKind::activation, "relu")},
       "layers",
       "residual block: layers, added to a shortcut of the input (identity, or a 1x1 conv + "
       "batchnorm where the shape changes), then activation (relu | none)"},
  };
  return table;
}

const LayerDef& layer_def(LayerKind kind) {
  for (const LayerDef& def : layer_table())
    if (def.kind == kind) return def;
  return layer_table().front();  // unreachable: every kind has a row (tested)
}

const LayerDef* find_layer(std::string_view name) {
  for (const LayerDef& def : layer_table())
    if (def.name == name) return &def;
  return nullptr;
}

const LayerArg* find_arg(const LayerDef& def, std::string_view name) {
  for (const LayerArg& arg : def.args)
    if (arg.name == name) return &arg;
  return nullptr;
}

std::string_view name_of(LayerKind kind) { return layer_def(kind).name; }

std::vector<std::string> layer_type_names() {
  std::vector<std::string> names;
  for (const LayerDef& def : layer_table()) names.emplace_back(def.name);
  return names;
}

std::string describe(ArgKind kind) {
  switch (kind) {
    case ArgKind::positive_int:
      return "must be >= 1";
    case ArgKind::non_negative_int:
      return "must be >= 0";
    case ArgKind::rate:
      return "must be in [0, 1)";
    case ArgKind::fraction:
      return "must be in [0, 1]";
    case ArgKind::positive_real:
      return "must be > 0";
    case ArgKind::boolean:
      return "must be true or false";
    case ArgKind::padding:
      return "must be 'same', 'valid' or an integer >= 0";
    case ArgKind::activation:
      return "must be one of " + words_text<Activation>();
    case ArgKind::layers:
      return "must be a list of layers";
  }
  return "";
}

std::optional<std::string> check_arg_value(const LayerArg& arg, double v) {
  bool ok = std::isfinite(v);
  switch (arg.kind) {
    case ArgKind::positive_int:  // whole: YAML readers refuse 2.5; C++ callers are told here
      ok = ok && v >= 1 && v == std::floor(v);
      break;
    case ArgKind::non_negative_int:
    case ArgKind::padding:
      ok = ok && v >= 0 && v == std::floor(v);
      break;
    case ArgKind::rate:
      ok = ok && v >= 0 && v < 1;
      break;
    case ArgKind::fraction:
      ok = ok && v >= 0 && v <= 1;
      break;
    case ArgKind::positive_real:
      ok = ok && v > 0;
      break;
    case ArgKind::boolean:
      ok = ok && (v == 0 || v == 1);
      break;
    case ArgKind::activation:  // words and lists, never numbers
    case ArgKind::layers:
      ok = false;
      break;
  }
  if (ok) return std::nullopt;
  return describe(arg.kind) + ", got " + shortest(v);
}

}  // namespace sweep::trainer
