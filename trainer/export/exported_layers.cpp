/*
 * exported_layers.cpp — the walk over a resolved layer list that mirrors each layer's setup()
 * (trainer/layers/) and the Network's parameter layout (network.h, residual.h). The total it takes
 * is checked against the file's arrays, so a walk that drifted from the engine would be refused
 * here rather than export wrong weights.
 */
#include "trainer/export/exported_layers.h"

#include "common/check.h"
#include "trainer/model_rebuild.h"

namespace sweep::trainer {

namespace {

class Walker {
 public:
  Walker(const ModelFile& m, const std::string& name) : m_(m), name_(name) {}

  std::vector<ExportLayer> walk(const std::vector<LayerSpec>& specs, Shape in,
                                const std::string& prefix) {
    std::vector<ExportLayer> out;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      out.push_back(layer(specs[i], in, prefix + std::to_string(i)));
      in = out.back().out;
    }
    return out;
  }

  void finish() const {
    if (p_ != m_.params.size() || s_ != m_.state.size())
      throw Error(name_ + ": internal: the export walk took " + std::to_string(p_) +
                  " parameters, the model holds " + std::to_string(m_.params.size()));
  }

 private:
  int integer(const LayerSpec& s, const char* k) const {
    const auto it = s.num.find(k);
    if (it == s.num.end())
      throw Error(name_ + ": model file's " + std::string(name_of(s.type)) + " layer has no '" + k +
                  "'");
    return static_cast<int>(it->second);
  }
  ExportTensor take(const std::string& name, std::vector<std::int64_t> dims, bool state) {
    std::size_t n = 1;
    for (std::int64_t d : dims) n *= std::size_t(d);
    const std::vector<float>& from = state ? m_.state : m_.params;
    std::size_t& at = state ? s_ : p_;
    if (at + n > from.size())
      throw Error(name_ + ": internal: the export walk ran past the model's arrays");
    ExportTensor t{name, std::move(dims),
                   std::vector<float>(from.begin() + std::ptrdiff_t(at),
                                      from.begin() + std::ptrdiff_t(at + n))};
    at += n;
    return t;
  }
  void conv(ExportLayer& l, int filters, bool bias) {
    l.out = Shape{filters, (l.in.h + 2 * l.pad - l.kernel) / l.stride + 1,
                  (l.in.w + 2 * l.pad - l.kernel) / l.stride + 1};
    l.tensors.push_back(take(l.name + ".weight", {filters, l.in.c, l.kernel, l.kernel}, false));
    if (bias) l.tensors.push_back(take(l.name + ".bias", {filters}, false));
  }
  void batchnorm(ExportLayer& l) {
    const std::int64_t c = l.in.c;
    l.tensors.push_back(take(l.name + ".weight", {c}, false));
    l.tensors.push_back(take(l.name + ".bias", {c}, false));
    l.tensors.push_back(take(l.name + ".running_mean", {c}, true));
    l.tensors.push_back(take(l.name + ".running_var", {c}, true));
  }

  ExportLayer layer(const LayerSpec& s, Shape in, const std::string& name) {
    ExportLayer l;
    l.kind = s.type;
    l.name = name;
    l.in = l.out = in;
    switch (s.type) {
      case LayerKind::conv: {
        l.kernel = integer(s, "kernel");
        l.stride = integer(s, "stride");
        const auto pad = s.str.find("padding");
        if (pad != s.str.end())
          l.pad = pad->second == "same" ? (l.kernel - 1) / 2 : 0;
        else
          l.pad = integer(s, "padding");
        conv(l, integer(s, "filters"), integer(s, "bias") != 0);
        break;
      }
      case LayerKind::batchnorm:
        l.eps = static_cast<float>(s.num.count("eps") ? s.num.at("eps") : 1e-5);
        batchnorm(l);
        break;
      case LayerKind::maxpool:
      case LayerKind::avgpool:
        l.kernel = integer(s, "size");
        l.stride = integer(s, "stride");
        l.pad = integer(s, "padding");
        l.out = Shape{in.c, (in.h + 2 * l.pad - l.kernel) / l.stride + 1,
                      (in.w + 2 * l.pad - l.kernel) / l.stride + 1};
        break;
      case LayerKind::gap:
        l.out = Shape{in.c, 1, 1};
        break;
      case LayerKind::flatten:
        l.out = Shape{int(in.numel()), 1, 1};
        break;
      case LayerKind::dense: {
        const int units = integer(s, "units");
        l.out = Shape{units, 1, 1};
        l.tensors.push_back(take(name + ".weight", {units, in.numel()}, false));
        if (integer(s, "bias") != 0) l.tensors.push_back(take(name + ".bias", {units}, false));
        break;
      }
      case LayerKind::relu:
      case LayerKind::dropout:
        break;
      case LayerKind::residual: {
        l.relu_after_sum = !s.str.count("activation") || s.str.at("activation") == "relu";
        l.body = walk(s.layers, in, name + ".body.");
        l.out = l.body.empty() ? in : l.body.back().out;
        if (!(l.out == in)) {
          int stride = 0;
          for (int st = 1; st <= std::max(in.h, in.w) && stride == 0; ++st)
            if ((in.h - 1) / st + 1 == l.out.h && (in.w - 1) / st + 1 == l.out.w) stride = st;
          if (stride == 0)
            throw Error(name_ + ": model file's residual block " + name +
                        " has no shortcut for its shapes");
          ExportLayer c;
          c.kind = LayerKind::conv;
          c.name = name + ".shortcut.0";
          c.in = in;
          c.kernel = 1;
          c.stride = stride;
          conv(c, l.out.c, false);
          ExportLayer b;
          b.kind = LayerKind::batchnorm;
          b.name = name + ".shortcut.1";
          b.in = b.out = l.out;
          batchnorm(b);
          l.shortcut = {std::move(c), std::move(b)};
        }
        break;
      }
    }
    return l;
  }

  const ModelFile& m_;
  const std::string& name_;
  std::size_t p_ = 0, s_ = 0;
};

void collect(const std::vector<ExportLayer>& layers, std::vector<const ExportTensor*>& out) {
  for (const ExportLayer& l : layers) {
    for (const ExportTensor& t : l.tensors) out.push_back(&t);
    collect(l.body, out);
    collect(l.shortcut, out);
  }
}

}  // namespace

std::vector<ExportLayer> exported_layers(const ModelFile& m, const std::string& name) {
  check_model_network(m, name);
  Walker w(m, name);
  std::vector<ExportLayer> layers = w.walk(model_spec_of(m, name).layers, model_input_shape(m), "");
  w.finish();
  return layers;
}

std::vector<const ExportTensor*> all_tensors(const std::vector<ExportLayer>& layers) {
  std::vector<const ExportTensor*> out;
  collect(layers, out);
  return out;
}

}  // namespace sweep::trainer
