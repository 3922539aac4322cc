/*
 * model_rebuild.cpp — layer lists to and from the model file's JSON, and the Network rebuilt from
 * a model file by the same code that built it for training.
 */
#include "trainer/model_rebuild.h"

#include <cmath>

#include "trainer/data/csv_reader.h"
#include "trainer/layers/layer.h"
#include "trainer/models.h"

namespace sweep::trainer {

namespace {

LayerSpec resolved(const LayerSpec& s) {
  const LayerDef& def = layer_def(s.type);
  LayerSpec out{s.type, {}, {}, {}};
  for (const LayerArg& a : def.args) {
    const std::string name(a.name);
    if (a.kind == ArgKind::layers) {
      out.layers = resolved_layer_specs(s.layers);
    } else if (a.kind == ArgKind::activation) {
      const auto it = s.str.find(name);
      out.str[name] = it != s.str.end() ? it->second : std::string(a.fallback_word);
    } else if (a.kind == ArgKind::padding && s.str.count(name)) {
      out.str[name] = s.str.at(name);
    } else if (const auto it = s.num.find(name); it != s.num.end()) {
      out.num[name] = it->second;
    } else if (!a.fallback_arg.empty()) {
      const auto other = s.num.find(std::string(a.fallback_arg));
      if (other != s.num.end()) out.num[name] = other->second;
    } else if (!a.required) {
      out.num[name] = a.fallback;
    }
  }
  return out;
}

[[noreturn]] void bad_layer(const std::string& name, const std::string& where,
                            const std::string& what) {
  throw Error(name + ": model file's layer " + where + ": " + what);
}

LayerSpec spec_from_json(const Json& j, const std::string& name, const std::string& where,
                         int depth) {
  if (depth > 64) bad_layer(name, where, "residual blocks nested deeper than 64");
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    bad_layer(name, where, "not an object with a 'type'");
  const LayerDef* def = find_layer(j["type"].get<std::string>());
  if (!def) bad_layer(name, where, "unknown type '" + j["type"].get<std::string>() + "'");
  LayerSpec s{def->kind, {}, {}, {}};
  for (const auto& [key, value] : j.items()) {
    if (key == "type") continue;
    const LayerArg* arg = find_arg(*def, key);
    if (!arg) bad_layer(name, where, "unknown argument '" + key + "'");
    if (arg->kind == ArgKind::layers) {
      if (!value.is_array() || value.empty()) bad_layer(name, where, "'layers' is not a list");
      for (std::size_t i = 0; i < value.size(); ++i)
        s.layers.push_back(
            spec_from_json(value[i], name, where + "." + std::to_string(i + 1), depth + 1));
    } else if (value.is_string()) {
      s.str[key] = value.get<std::string>();
    } else if (value.is_number() && std::isfinite(value.get<double>())) {
      s.num[key] = value.get<double>();
    } else {
      bad_layer(name, where, "argument '" + key + "' is neither a number nor text");
    }
  }
  return s;
}

}  // namespace

std::vector<LayerSpec> resolved_layer_specs(const std::vector<LayerSpec>& specs) {
  std::vector<LayerSpec> out;
  out.reserve(specs.size());
  for (const LayerSpec& s : specs) out.push_back(resolved(s));
  return out;
}

Json layer_specs_json(const std::vector<LayerSpec>& specs) {
  Json out = Json::array();
  for (const LayerSpec& s : resolved_layer_specs(specs)) {
    Json j = {{"type", std::string(name_of(s.type))}};
    for (const auto& [k, v] : s.num) j[k] = v;
    for (const auto& [k, v] : s.str) j[k] = v;
    if (!s.layers.empty()) j["layers"] = layer_specs_json(s.layers);
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<LayerSpec> layer_specs_from_json(const Json& layers, const std::string& name) {
  if (!layers.is_array() || layers.empty())
    throw Error(name + ": model file's 'layers' is not a list of layers");
  std::vector<LayerSpec> out;
  for (std::size_t i = 0; i < layers.size(); ++i)
    out.push_back(spec_from_json(layers[i], name, std::to_string(i + 1), 0));
  return out;
}

ModelFile model_file_of(const TrainConfig& cfg, const LoadedData& data, Network& net) {
  const Dataset& d = data.train;
  ModelFile m;
  m.regression = net.classes() == 0;
  m.outputs = output_units(net.classes());
  m.class_names = d.class_names;
  m.input.c = d.c;
  m.input.h = d.h;
  m.input.w = d.w;
  m.input.is_float = d.is_float();
  m.input.scale = data.norm.scale;
  for (int ch = 0; ch < d.c; ++ch) {
    m.input.mean.push_back(data.norm.mean_of(ch));
    m.input.stdev.push_back(data.norm.stdev_of(ch));
  }
  if (cfg.data.dataset == DatasetKind::folder)
    m.input.decode = ModelImageDecode{d.c, d.h, d.w, std::string(name_of(cfg.data.folder.resize))};
  if (cfg.data.dataset == DatasetKind::csv) {
    m.input.label_column = cfg.data.label;
    m.input.columns = cfg.data.feature_columns;
    if (m.input.columns.empty())
      for (const std::string& col : read_csv_header(cfg.data.path))
        if (col != cfg.data.label) m.input.columns.push_back(col);
    if (std::int64_t(m.input.columns.size()) != d.image_bytes()) m.input.columns.clear();
  }
  m.layers = layer_specs_json(model_layer_specs(cfg.model, net.classes()));
  m.output_network = std::string(name_of(cfg.training.output_network));
  m.params.resize(net.param_count());
  m.state.resize(net.state_count());
  if (!m.params.empty())
    net.backend().copy_to_host(m.params.data(), net.params(), m.params.size() * sizeof(float));
  if (!m.state.empty())
    net.backend().copy_to_host(m.state.data(), net.state(), m.state.size() * sizeof(float));
  return m;
}

int model_classes(const ModelFile& m) { return m.regression ? 0 : m.outputs; }

Shape model_input_shape(const ModelFile& m) { return Shape{m.input.c, m.input.h, m.input.w}; }

ModelSpec model_spec_of(const ModelFile& m, const std::string& name) {
  ModelSpec spec;
  spec.preset = Preset::none;
  spec.layers = layer_specs_from_json(m.layers, name);
  return spec;
}

void check_model_network(const ModelFile& m, const std::string& name) {
  const ModelSpec spec = model_spec_of(m, name);
  const LayerSpec& last = spec.layers.back();
  if (last.type != LayerKind::dense || !last.num.count("units") ||
      last.num.at("units") != m.outputs)
    throw Error(name + ": model file's last layer is not a dense layer of its " +
                std::to_string(m.outputs) + " outputs");
  std::size_t params = 0, state = 0;
  try {
    const auto layers = build_layers(spec, model_classes(m));
    setup_layers(layers, model_input_shape(m));
    for (const auto& l : layers) {
      params += l->param_count();
      state += l->state_count();
    }
  } catch (const Error& e) {
    throw Error(name + ": model file's layers cannot be built: " + e.what());
  }
  if (params != m.params.size() || state != m.state.size())
    throw Error(name + ": model file's layers take " + std::to_string(params) + " parameters and " +
                std::to_string(state) + " state values, the file holds " +
                std::to_string(m.params.size()) + " and " + std::to_string(m.state.size()));
}

std::unique_ptr<Network> rebuild_network(Backend& backend, const ModelFile& m, int max_batch,
                                         const std::string& name) {
  check_model_network(m, name);
  auto net = std::make_unique<Network>(backend, model_spec_of(m, name), model_input_shape(m),
                                       model_classes(m), max_batch, 0);
  if (!m.params.empty())
    backend.copy_to_device(net->params(), m.params.data(), m.params.size() * sizeof(float));
  if (!m.state.empty())
    backend.copy_to_device(net->state(), m.state.data(), m.state.size() * sizeof(float));
  return net;
}

}  // namespace sweep::trainer
