/*
 * models.cpp — presets as LayerSpec lists, and LayerSpec → Layer with argument checking.
 *
 * Every argument a layer type accepts is listed here; anything else (a typo such as "filter") is
 * an error rather than silently ignored, because a sweep that trains the wrong model for hours is
 * worse than one that refuses to start.
 */
#include "trainer/models.h"

#include <algorithm>
#include <set>

#include "common/check.h"
#include "trainer/layers/activation.h"
#include "trainer/layers/batchnorm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/layer.h"
#include "trainer/layers/pool.h"

namespace sweep::trainer {

namespace {

LayerSpec spec(std::string type, std::map<std::string, double> num = {},
               std::map<std::string, std::string> str = {}) {
  return LayerSpec{std::move(type), std::move(num), std::move(str)};
}

std::vector<LayerSpec> preset_specs(const ModelSpec& m, int classes) {
  std::vector<LayerSpec> l;
  if (m.preset == "lenet") {
    l = {spec("conv", {{"filters", 20}, {"kernel", 5}}),
         spec("maxpool", {{"size", 2}, {"stride", 2}}),
         spec("conv", {{"filters", 50}, {"kernel", 5}}),
         spec("maxpool", {{"size", 2}, {"stride", 2}}),
         spec("flatten"),
         spec("dense", {{"units", 500}}),
         spec("relu"),
         spec("dense", {{"units", classes}})};
  } else if (m.preset == "convnet") {
    if (m.net_width < 1)
      throw Error("model.net_width must be at least 1, got " + std::to_string(m.net_width));
    if (m.block_depth < 1)
      throw Error("model.block_depth must be at least 1, got " + std::to_string(m.block_depth));
    for (int b = 0; b < 3; ++b) {
      for (int d = 0; d < m.block_depth; ++d) {
        l.push_back(spec("conv", {{"filters", m.net_width << b}, {"kernel", 3}, {"bias", 0}},
                         {{"padding", "same"}}));
        l.push_back(spec("batchnorm"));
        l.push_back(spec("relu"));
      }
      if (b < 2) l.push_back(spec("maxpool", {{"size", 2}, {"stride", 2}}));
    }
    l.push_back(spec("gap"));
    l.push_back(spec("dense", {{"units", classes}}));
  } else if (m.preset == "mlp") {
    if (!(m.dropout >= 0.0 && m.dropout < 1.0))
      throw Error("model.dropout must be in [0, 1), got " + std::to_string(m.dropout));
    l.push_back(spec("flatten"));
    for (int h : m.hidden) {
      if (h < 1) throw Error("model.hidden sizes must be at least 1, got " + std::to_string(h));
      l.push_back(spec("dense", {{"units", h}}));
      l.push_back(spec("relu"));
      if (m.dropout > 0) l.push_back(spec("dropout", {{"rate", m.dropout}}));
    }
    l.push_back(spec("dense", {{"units", classes}}));
  } else if (m.preset.empty()) {
    throw Error("model has no layers: set model.preset (lenet, convnet, mlp) or model.layers");
  } else {
    throw Error("unknown model.preset '" + m.preset + "' (known: lenet, convnet, mlp)");
  }
  return l;
}

const std::map<std::string, std::set<std::string>>& known_arguments() {
  static const std::map<std::string, std::set<std::string>> known = {
      {"conv", {"filters", "kernel", "stride", "padding", "bias"}},
      {"batchnorm", {"eps", "momentum"}},
      {"relu", {}},
      {"maxpool", {"size", "stride", "padding"}},
      {"avgpool", {"size", "stride", "padding"}},
      {"gap", {}},
      {"dense", {"units", "bias"}},
      {"dropout", {"rate"}},
      {"flatten", {}}};
  return known;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

bool bool_arg(const LayerSpec& s, const std::string& key, bool fallback) {
  const int one = fallback ? 1 : 0;
  const int v = int_arg(s, key, 0, &one);
  if (v > 1) throw Error("argument '" + key + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

double real_arg(const LayerSpec& s, const std::string& key, double fallback, bool required) {
  const auto it = s.num.find(key);
  if (it == s.num.end()) {
    if (required) throw Error("missing required argument '" + key + "'");
    return fallback;
  }
  return it->second;
}

std::unique_ptr<Layer> make_layer(const LayerSpec& s) {
  const auto& known = known_arguments();
  const auto kind = known.find(s.type);
  if (kind == known.end()) {
    std::set<std::string> types;
    for (const auto& [t, args] : known) types.insert(t);
    throw Error("unknown layer type (known: " + joined(types) + ")");
  }
  for (const auto& [key, value] : s.num)
    if (!kind->second.count(key))
      throw Error("unknown argument '" + key + "' (known: " + joined(kind->second) + ")");
  for (const auto& [key, value] : s.str)
    if (!kind->second.count(key))
      throw Error("unknown argument '" + key + "' (known: " + joined(kind->second) + ")");

  const int one = 1, zero = 0;
  if (s.type == "conv") {
    Conv2dOptions o;
    o.filters = int_arg(s, "filters", 1, nullptr);
    o.kernel = int_arg(s, "kernel", 1, nullptr);
    o.stride = int_arg(s, "stride", 1, &one);
    o.bias = bool_arg(s, "bias", true);
    const auto pad_text = s.str.find("padding");
    if (pad_text != s.str.end()) {
      if (pad_text->second == "same")
        o.same = true;
      else if (pad_text->second == "valid")
        o.padding = 0;
      else
        throw Error("padding must be a number, 'same' or 'valid', not '" + pad_text->second + "'");
    } else {
      o.padding = int_arg(s, "padding", 0, &zero);
    }
    return std::make_unique<Conv2d>(o);
  }
  if (s.type == "batchnorm") {
    const double eps = real_arg(s, "eps", 1e-5, false);
    const double momentum = real_arg(s, "momentum", 0.1, false);
    if (!(eps > 0)) throw Error("eps must be positive");
    if (!(momentum >= 0 && momentum <= 1)) throw Error("momentum must be in [0, 1]");
    return std::make_unique<BatchNorm>(static_cast<float>(eps), static_cast<float>(momentum));
  }
  if (s.type == "relu") return std::make_unique<ReLU>();
  if (s.type == "maxpool" || s.type == "avgpool") {
    const int size = int_arg(s, "size", 1, nullptr);
    const int stride = int_arg(s, "stride", 1, &size);
    const int padding = int_arg(s, "padding", 0, &zero);
    return std::make_unique<Pool2d>(s.type == "maxpool" ? PoolMode::max : PoolMode::average, size,
                                    stride, padding);
  }
  if (s.type == "gap") return std::make_unique<GlobalAvgPool>();
  if (s.type == "dense")
    return std::make_unique<Dense>(int_arg(s, "units", 1, nullptr), bool_arg(s, "bias", true));
  if (s.type == "dropout") {
    const double rate = real_arg(s, "rate", 0, true);
    if (!(rate >= 0 && rate < 1))
      throw Error("rate must be in [0, 1), got " + std::to_string(rate));
    return std::make_unique<Dropout>(static_cast<float>(rate));
  }
  return std::make_unique<Flatten>();  // the only type left in known_arguments()
}

}  // namespace

std::string layer_error_prefix(std::size_t index, std::size_t count, const std::string& type) {
  return "model layer " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" +
         (type.empty() ? std::string("no type") : type) + "): ";
}

std::vector<LayerSpec> model_layer_specs(const ModelSpec& model, int classes) {
  if (classes < 1) throw Error("the model needs at least 1 class, got " + std::to_string(classes));
  std::vector<LayerSpec> specs = model.layers.empty() ? preset_specs(model, classes) : model.layers;
  const bool ends_in_classes = !specs.empty() && specs.back().type == "dense" &&
                               specs.back().num.count("units") &&
                               specs.back().num.at("units") == classes;
  if (!ends_in_classes) specs.push_back(spec("dense", {{"units", classes}}));
  return specs;
}

std::vector<std::unique_ptr<Layer>> build_layers(const ModelSpec& model, int classes) {
  const std::vector<LayerSpec> specs = model_layer_specs(model, classes);
  std::vector<std::unique_ptr<Layer>> layers;
  layers.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    try {
      layers.push_back(make_layer(specs[i]));
    } catch (const Error& e) {
      throw Error(layer_error_prefix(i, specs.size(), specs[i].type) + e.what());
    }
  }
  return layers;
}

std::vector<Shape> setup_layers(const std::vector<std::unique_ptr<Layer>>& layers, Shape input) {
  if (input.c < 1 || input.h < 1 || input.w < 1)
    throw Error("model input shape " + std::to_string(input.c) + "x" + std::to_string(input.h) +
                "x" + std::to_string(input.w) + " has an empty dimension");
  std::vector<Shape> shapes{input};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    try {
      shapes.push_back(layers[i]->setup(shapes.back()));
    } catch (const Error& e) {
      throw Error(layer_error_prefix(i, layers.size(), layers[i]->type()) + e.what());
    }
  }
  return shapes;
}

std::size_t check_model(const ModelSpec& model, Shape input, int classes) {
  const auto layers = build_layers(model, classes);
  setup_layers(layers, input);
  std::size_t params = 0;
  for (const auto& l : layers) params += l->param_count();
  return params;
}

}  // namespace sweep::trainer
