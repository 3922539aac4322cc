/*
 * onnx_export.cpp — the graph built node by node from exported_layers(), weights as initializers
 * (raw little-endian float32), then checked by ONNX's own checker before it is returned.
 */
#include "trainer/export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <cstring>

#include "common/check.h"
#include "common/json.h"
#include "trainer/export/exported_layers.h"

namespace sweep::trainer {

namespace {

class GraphBuilder {
 public:
  explicit GraphBuilder(onnx::GraphProto& g) : g_(g) {}

  std::string fresh(const std::string& base) { return base + "_" + std::to_string(next_++); }

  std::string initializer(const std::string& name, const std::vector<std::int64_t>& dims,
                          const std::vector<float>& values) {
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : dims) t->add_dims(d);
    t->set_raw_data(
        std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return name;
  }
  std::string int64s(const std::string& name, const std::vector<std::int64_t>& values) {
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(std::int64_t(values.size()));
    for (std::int64_t v : values) t->add_int64_data(v);
    return name;
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& output, const std::string& name) {
    onnx::NodeProto* n = g_.add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void ints(onnx::NodeProto* n, const char* name, std::vector<std::int64_t> v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const char* name, std::int64_t v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void real(onnx::NodeProto* n, const char* name, float v) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  // `x` as (N, C, H, W) of `shape`: a Reshape when it is (N, features) after a dense layer.
  std::string as_4d(const std::string& x, bool& rank4, Shape shape) {
    if (rank4) return x;
    const std::string y = fresh("reshaped");
    node("Reshape", {x, int64s(fresh("shape"), {-1, shape.c, shape.h, shape.w})}, y, y);
    rank4 = true;
    return y;
  }

  // Emits `l` on `x` (rank4: x is (N, C, H, W), else (N, features)); returns its output.
  std::string layer(const ExportLayer& l, std::string x, bool& rank4) {
    const std::string out = "t" + l.name;
    switch (l.kind) {
      case LayerKind::conv: {
        x = as_4d(x, rank4, l.in);
        std::vector<std::string> in = {x};
        for (const ExportTensor& t : l.tensors) in.push_back(initializer(t.name, t.dims, t.values));
        onnx::NodeProto* n = node("Conv", in, out, l.name);
        ints(n, "kernel_shape", {l.kernel, l.kernel});
        ints(n, "strides", {l.stride, l.stride});
        ints(n, "pads", {l.pad, l.pad, l.pad, l.pad});
        return out;
      }
      case LayerKind::batchnorm: {
        std::vector<std::string> in = {x};
        for (const ExportTensor& t : l.tensors) in.push_back(initializer(t.name, t.dims, t.values));
        real(node("BatchNormalization", in, out, l.name), "epsilon", l.eps);
        return out;
      }
      case LayerKind::relu:
        node("Relu", {x}, out, l.name);
        return out;
      case LayerKind::maxpool:
      case LayerKind::avgpool: {
        x = as_4d(x, rank4, l.in);
        onnx::NodeProto* n =
            node(l.kind == LayerKind::maxpool ? "MaxPool" : "AveragePool", {x}, out, l.name);
        ints(n, "kernel_shape", {l.kernel, l.kernel});
        ints(n, "strides", {l.stride, l.stride});
        ints(n, "pads", {l.pad, l.pad, l.pad, l.pad});
        if (l.kind == LayerKind::avgpool) integer(n, "count_include_pad", 1);
        return out;
      }
      case LayerKind::gap:
        x = as_4d(x, rank4, l.in);
        node("GlobalAveragePool", {x}, out, l.name);
        return out;
      case LayerKind::flatten:
        if (!rank4) return x;
        integer(node("Flatten", {x}, out, l.name), "axis", 1);
        rank4 = false;
        return out;
      case LayerKind::dropout:
        return x;
      case LayerKind::dense: {
        if (rank4) {
          const std::string flat = fresh("flat");
          integer(node("Flatten", {x}, flat, flat), "axis", 1);
          x = flat;
          rank4 = false;
        }
        std::vector<std::string> in = {x};
        for (const ExportTensor& t : l.tensors) in.push_back(initializer(t.name, t.dims, t.values));
        integer(node("Gemm", in, out, l.name), "transB", 1);
        return out;
      }
      case LayerKind::residual: {
        const bool rank4_in = rank4;
        std::string f = x;
        for (const ExportLayer& b : l.body) f = layer(b, f, rank4);
        std::string shortcut = x;
        bool rank4_sc = rank4_in;
        for (const ExportLayer& s : l.shortcut) shortcut = layer(s, shortcut, rank4_sc);
        if (rank4 != rank4_sc) {  // one side flat, the other not: both as (N, C, H, W)
          f = as_4d(f, rank4, l.out);
          shortcut = as_4d(shortcut, rank4_sc, l.out);
        }
        const std::string sum = l.relu_after_sum ? fresh("sum") : out;
        node("Add", {f, shortcut}, sum, l.name + ".add");
        if (l.relu_after_sum) node("Relu", {sum}, out, l.name + ".relu");
        return out;
      }
    }
    throw Error("internal: a layer kind the ONNX export does not know");
  }

 private:
  onnx::GraphProto& g_;
  int next_ = 0;
};

void value_info(onnx::ValueInfoProto* v, const std::string& name,
                const std::vector<std::int64_t>& dims) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* s = t->mutable_shape();
  s->add_dim()->set_dim_param("N");
  for (std::int64_t d : dims) s->add_dim()->set_dim_value(d);
}

void metadata(onnx::ModelProto& model, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* e = model.add_metadata_props();
  e->set_key(key);
  e->set_value(value);
}

}  // namespace

std::string onnx_model_bytes(const ModelFile& m, const std::string& name) {
  const std::vector<ExportLayer> layers = exported_layers(m, name);
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  model.set_producer_name("sweep");
  model.set_model_version(1);
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  metadata(model, "class_names", json_text(Json(m.class_names)));
  metadata(model, "task", m.regression ? "regression" : "classification");
  metadata(model, "sweep", m.sweep);
  metadata(model, "trial", std::to_string(m.trial));
  metadata(model, "output_network", m.output_network);

  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(m.sweep.empty() ? "sweep_model" : m.sweep);
  value_info(g.add_input(), "input", {m.input.c, m.input.h, m.input.w});
  GraphBuilder b(g);

  // The input's scaling and normalisation: x * (scale / std) + (-mean / std), per channel.
  std::vector<float> mul, add;
  for (int c = 0; c < m.input.c; ++c) {
    mul.push_back(m.input.scale / m.input.stdev[std::size_t(c)]);
    add.push_back(-m.input.mean[std::size_t(c)] / m.input.stdev[std::size_t(c)]);
  }
  b.node("Mul", {"input", b.initializer("input_scale", {1, m.input.c, 1, 1}, mul)}, "scaled",
         "input_scale");
  b.node("Add", {"scaled", b.initializer("input_shift", {1, m.input.c, 1, 1}, add)}, "normalised",
         "input_shift");
  std::string x = "normalised";
  bool rank4 = true;
  for (const ExportLayer& l : layers) x = b.layer(l, x, rank4);
  if (rank4) {  // cannot happen (the list ends in a dense layer), kept for safety
    const std::string flat = b.fresh("flat");
    b.integer(b.node("Flatten", {x}, flat, flat), "axis", 1);
    x = flat;
  }
  if (m.regression) {
    b.node("Identity", {x}, "output", "output");
  } else {
    b.integer(b.node("Softmax", {x}, "output", "softmax"), "axis", 1);
  }
  value_info(g.add_output(), "output", {m.outputs});

  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(name + ": internal: the exported ONNX model fails ONNX's checker: " + e.what());
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Error(name + ": the ONNX model could not be serialised (larger than 2 GB?)");
  return bytes;
}

}  // namespace sweep::trainer
