/*
 * models.cpp — presets as LayerSpec lists, and LayerSpec → Layer with argument checking.
 *
 * Every argument a layer type accepts is in trainer/layer_table.h; anything else (a typo such as
 * "filter") is an error rather than silently ignored, because a sweep that trains the wrong model
 * for hours is worse than one that refuses to start.
 */
#include "trainer/models.h"

#include <algorithm>

#include "common/check.h"
#include "trainer/layers/activation.h"
#include "trainer/layers/batchnorm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/layer.h"
#include "trainer/layers/pool.h"
#include "trainer/layers/residual.h"

namespace sweep::trainer {

namespace {

LayerSpec spec(LayerKind type, std::map<std::string, double> num = {},
               std::map<std::string, std::string> str = {}) {
  return LayerSpec{type, std::move(num), std::move(str)};
}

// A 3x3 convolution without bias (a batch norm follows): "same" at stride 1, padding 1 at
// stride 2 (PyTorch's ResNets; "same" is only offered at stride 1).
LayerSpec conv3x3(int filters, int stride) {
  if (stride == 1)
    return spec(LayerKind::conv, {{"filters", filters}, {"kernel", 3}, {"bias", 0}},
                {{"padding", "same"}});
  return spec(
      LayerKind::conv,
      {{"filters", filters}, {"kernel", 3}, {"stride", stride}, {"padding", 1}, {"bias", 0}});
}

// ResNet's basic block: [conv 3x3 (stride), bn, relu, conv 3x3, bn] + shortcut, then relu.
LayerSpec basic_block(int filters, int stride) {
  LayerSpec block = spec(LayerKind::residual);
  block.layers = {conv3x3(filters, stride), spec(LayerKind::batchnorm), spec(LayerKind::relu),
                  conv3x3(filters, 1), spec(LayerKind::batchnorm)};
  return block;
}

std::vector<LayerSpec> resnet_specs(const ModelSpec& m, int classes) {
  if (m.width < 1 || m.width > kMaxResNetWidth)
    throw Error("model.width must be between 1 and " + std::to_string(kMaxResNetWidth) + ", got " +
                std::to_string(m.width));
  if (!is_resnet_depth(m.depth))
    throw Error("preset resnet has no depth " + std::to_string(m.depth) + "; it builds " +
                resnet_depths_text());
  // Blocks per stage and the first stage's channels; each later stage doubles them and starts
  // with a stride-2 block.
  std::vector<int> blocks;
  int channels = 16;
  if (m.depth == 18 || m.depth == 34) {
    blocks = m.depth == 18 ? std::vector<int>{2, 2, 2, 2} : std::vector<int>{3, 4, 6, 3};
    channels = 64;
  } else {
    blocks.assign(3, (m.depth - 2) / 6);
  }
  channels *= m.width;
  std::vector<LayerSpec> l = {conv3x3(channels, 1), spec(LayerKind::batchnorm),
                              spec(LayerKind::relu)};
  for (std::size_t stage = 0; stage < blocks.size(); ++stage)
    for (int b = 0; b < blocks[stage]; ++b)
      l.push_back(basic_block(channels << stage, stage > 0 && b == 0 ? 2 : 1));
  l.push_back(spec(LayerKind::gap));
  l.push_back(spec(LayerKind::dense, {{"units", classes}}));
  return l;
}

std::vector<LayerSpec> preset_specs(const ModelSpec& m, int classes) {
  std::vector<LayerSpec> l;
  switch (m.preset) {
    case Preset::lenet:
      l = {spec(LayerKind::conv, {{"filters", 20}, {"kernel", 5}}),
           spec(LayerKind::maxpool, {{"size", 2}, {"stride", 2}}),
           spec(LayerKind::conv, {{"filters", 50}, {"kernel", 5}}),
           spec(LayerKind::maxpool, {{"size", 2}, {"stride", 2}}),
           spec(LayerKind::flatten),
           spec(LayerKind::dense, {{"units", 500}}),
           spec(LayerKind::relu),
           spec(LayerKind::dense, {{"units", classes}})};
      return l;
    case Preset::convnet:
      if (m.net_width < 1)
        throw Error("model.net_width must be at least 1, got " + std::to_string(m.net_width));
      if (m.block_depth < 1)
        throw Error("model.block_depth must be at least 1, got " + std::to_string(m.block_depth));
      for (int b = 0; b < 3; ++b) {
        for (int d = 0; d < m.block_depth; ++d) {
          l.push_back(spec(LayerKind::conv,
                           {{"filters", m.net_width << b}, {"kernel", 3}, {"bias", 0}},
                           {{"padding", "same"}}));
          l.push_back(spec(LayerKind::batchnorm));
          l.push_back(spec(LayerKind::relu));
        }
        if (b < 2) l.push_back(spec(LayerKind::maxpool, {{"size", 2}, {"stride", 2}}));
      }
      l.push_back(spec(LayerKind::gap));
      l.push_back(spec(LayerKind::dense, {{"units", classes}}));
      return l;
    case Preset::mlp:
      if (!(m.dropout >= 0.0 && m.dropout < 1.0))
        throw Error("model.dropout must be in [0, 1), got " + std::to_string(m.dropout));
      l.push_back(spec(LayerKind::flatten));
      for (int h : m.hidden) {
        if (h < 1) throw Error("model.hidden sizes must be at least 1, got " + std::to_string(h));
        l.push_back(spec(LayerKind::dense, {{"units", h}}));
        l.push_back(spec(LayerKind::relu));
        if (m.dropout > 0) l.push_back(spec(LayerKind::dropout, {{"rate", m.dropout}}));
      }
      l.push_back(spec(LayerKind::dense, {{"units", classes}}));
      return l;
    case Preset::resnet:
      return resnet_specs(m, classes);
    case Preset::none:
      break;
  }
  throw Error("model has no layers: set model.preset (" + words_text<Preset>() +
              ") or model.layers");
}

std::string arg_names(const LayerDef& def) {
  std::string s;
  for (const LayerArg& a : def.args) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s.empty() ? "none" : s;
}

// A LayerSpec's arguments checked against its row of the layer table: every argument known,
// every value of its kind, every required one given; absent ones read as the table's default.
class LayerArgs {
 public:
  explicit LayerArgs(const LayerSpec& s) : spec_(s), def_(layer_def(s.type)) {
    for (const auto& [key, value] : s.num) {
      const LayerArg* arg = known(key);
      if (arg->kind == ArgKind::padding) continue;  // checked with its text form below
      if (auto problem = check_arg_value(*arg, value))
        throw Error("argument '" + key + "' " + *problem);
    }
    for (const auto& [key, value] : s.str) {
      const LayerArg* arg = known(key);
      const bool ok = (arg->kind == ArgKind::padding && (value == "same" || value == "valid")) ||
                      (arg->kind == ArgKind::activation && parse_word<Activation>(value));
      if (!ok)
        throw Error("argument '" + key + "' " + describe(arg->kind) + ", got '" + value + "'");
    }
    const bool takes_layers =
        std::any_of(def_.args.begin(), def_.args.end(),
                    [](const LayerArg& a) { return a.kind == ArgKind::layers; });
    if (!s.layers.empty() && !takes_layers)
      throw Error("'" + std::string(def_.name) + "' takes no list of layers");
    for (const LayerArg& arg : def_.args) {
      const bool given =
          arg.kind == ArgKind::layers ? !s.layers.empty() : s.num.count(std::string(arg.name)) > 0;
      if (arg.required && !given)
        throw Error("missing required argument '" + std::string(arg.name) + "'");
    }
  }

  double number(std::string_view name) const {
    if (auto it = spec_.num.find(std::string(name)); it != spec_.num.end()) return it->second;
    const LayerArg& arg = *find_arg(def_, name);
    return arg.fallback_arg.empty() ? arg.fallback : number(arg.fallback_arg);
  }
  int integer(std::string_view name) const {
    const double v = number(name);
    if (v > 1e9) throw Error("argument '" + std::string(name) + "' is too large");
    return static_cast<int>(v);
  }
  bool flag(std::string_view name) const { return number(name) != 0; }
  std::string text(std::string_view name) const {
    const auto it = spec_.str.find(std::string(name));
    return it == spec_.str.end() ? std::string() : it->second;
  }
  template <class E>
  E word(std::string_view name) const {  // checked in the constructor
    const auto it = spec_.str.find(std::string(name));
    return *parse_word<E>(it == spec_.str.end() ? find_arg(def_, name)->fallback_word
                                                : std::string_view(it->second));
  }

 private:
  const LayerArg* known(const std::string& key) const {
    const LayerArg* arg = find_arg(def_, key);
    if (!arg) throw Error("unknown argument '" + key + "' (known: " + arg_names(def_) + ")");
    return arg;
  }

  const LayerSpec& spec_;
  const LayerDef& def_;
};

std::unique_ptr<Layer> make_layer(const LayerSpec& s) {
  const LayerArgs args(s);
  switch (s.type) {
    case LayerKind::conv: {
      Conv2dOptions o;
      o.filters = args.integer("filters");
      o.kernel = args.integer("kernel");
      o.stride = args.integer("stride");
      o.bias = args.flag("bias");
      const std::string pad = args.text("padding");
      o.same = pad == "same";
      o.padding = pad.empty() ? args.integer("padding") : 0;
      return std::make_unique<Conv2d>(o);
    }
    case LayerKind::batchnorm:
      return std::make_unique<BatchNorm>(static_cast<float>(args.number("eps")),
                                         static_cast<float>(args.number("momentum")));
    case LayerKind::relu:
      return std::make_unique<ReLU>();
    case LayerKind::maxpool:
    case LayerKind::avgpool:
      return std::make_unique<Pool2d>(
          s.type == LayerKind::maxpool ? PoolMode::max : PoolMode::average, args.integer("size"),
          args.integer("stride"), args.integer("padding"));
    case LayerKind::gap:
      return std::make_unique<GlobalAvgPool>();
    case LayerKind::dense:
      return std::make_unique<Dense>(args.integer("units"), args.flag("bias"));
    case LayerKind::dropout:
      return std::make_unique<Dropout>(static_cast<float>(args.number("rate")));
    case LayerKind::flatten:
      return std::make_unique<Flatten>();
    case LayerKind::residual: {
      std::vector<std::unique_ptr<Layer>> body;
      for (std::size_t j = 0; j < s.layers.size(); ++j) {
        try {
          body.push_back(make_layer(s.layers[j]));
        } catch (const Error& e) {
          throw LayerError::in_layer(
              j, block_layer_error_prefix(j, s.layers.size(), name_of(s.layers[j].type)), e);
        }
      }
      return std::make_unique<Residual>(std::move(body), args.word<Activation>("activation"));
    }
  }
  throw Error("unknown layer type (known: " + std::string(name_of(s.type)) + ")");
}

}  // namespace

bool is_resnet_depth(int depth) {
  return depth == 18 || depth == 34 ||
         (depth >= 8 && depth <= kMaxResNetDepth && (depth - 2) % 6 == 0);
}

std::string resnet_depths_text() {
  return "6n+2 from 8 to " + std::to_string(kMaxResNetDepth) +
         " (CIFAR ResNets: 20, 32, 44, 56, 110, ...) or 18, 34 (ResNet-18/34, CIFAR variant)";
}

std::string layer_error_prefix(std::size_t index, std::size_t count, std::string_view type) {
  return "model layer " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" +
         (type.empty() ? std::string("no type") : std::string(type)) + "): ";
}

std::vector<LayerSpec> model_layer_specs(const ModelSpec& model, int data_classes) {
  if (data_classes < 0)
    throw Error("the model needs at least 1 class (0: regression), got " +
                std::to_string(data_classes));
  const int classes = output_units(data_classes);
  std::vector<LayerSpec> specs = model.layers.empty() ? preset_specs(model, classes) : model.layers;
  const bool ends_in_classes = !specs.empty() && specs.back().type == LayerKind::dense &&
                               specs.back().num.count("units") &&
                               specs.back().num.at("units") == classes;
  if (!ends_in_classes) specs.push_back(spec(LayerKind::dense, {{"units", classes}}));
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
      throw LayerError::in_layer(i, layer_error_prefix(i, specs.size(), name_of(specs[i].type)), e);
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
      throw LayerError::in_layer(i, layer_error_prefix(i, layers.size(), layers[i]->type()), e);
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
