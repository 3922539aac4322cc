/*
 * cudnn_graph.cpp — NhwcConvPlan (cudnn_graph.h): one single-op graph per convolution op, its
 * engines from cuDNN's heuristics, each candidate finalised into an execution plan and timed.
 *
 * The operation graph and the execution plans are given the handle through
 * CUDNN_ATTR_*_HANDLE, which cuDNN 9 marks deprecated (in favour of device-property descriptors
 * for building plans without a GPU, which we never do); the pragma keeps a build that defines
 * CUDNN_WARN_DEPRECATED quiet.
 */
#undef CUDNN_WARN_DEPRECATED
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "trainer/cuda/cudnn_graph.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/cuda/cuda_raii.h"
#include "trainer/cuda/graph_timing.h"
#include "trainer/cuda/tuning_fingerprint.h"

namespace sweep::trainer::cuda {

namespace {

// Engine configurations timed per op, in the heuristics' order. (Mode B's list beside mode A's,
// 16 candidates, was tried: no faster engine at our shapes, and 8 s more start-up for 16 bf16
// conv-block trials on an H200.)
constexpr int kMaxCandidates = 8;
constexpr int kCallsPerGraph = 10;
// A candidate whose one-call probe (launch latency included) takes longer than kProbeMargin times
// the best so far plus kProbeSlackUs is not timed in full.
constexpr float kProbeMargin = 3.f, kProbeSlackUs = 20.f;
constexpr int kTimedReplays = 3;
// A bf16 weight gradient must be this much faster than the best fp32 one to be taken: rounding
// the gradient to bf16 (as autocast does) cost a small conv-block net 1-3 points of accuracy after
// 3 epochs against fp32 gradients' 0-1 (CudaBf16Train.ConvBlockNetWithAdam, 8-12 runs each), and
// an fp32 gradient is about as fast on the deeper layers; only where the fp32 engines are several
// times slower (up to 20x at 32 channels of 32x32) does bf16 win.
constexpr float kBf16GradientHandicap = 1.25f;
constexpr std::int64_t kX = 1, kW = 2, kY = 3;  // tensor ids: x (or dx), w (or dw), y (or dy)

// A backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    SWEEP_CHECK_CUDNN(cudnnBackendCreateDescriptor(type, &d_));
  }
  ~Desc() {
    if (d_)
      SWEEP_LOG_ON_ERROR(cudnnBackendDestroyDescriptor(d_) == CUDNN_STATUS_SUCCESS,
                         "cudnnBackendDestroyDescriptor");
  }
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&&) = delete;
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }

  template <class T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values,
           std::int64_t count = 1) {
    SWEEP_CHECK_CUDNN(cudnnBackendSetAttribute(d_, name, type, count, values));
  }
  void set(cudnnBackendAttributeName_t name, const Desc& other) {
    const cudnnBackendDescriptor_t o = other.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
  }
  void finalize() { SWEEP_CHECK_CUDNN(cudnnBackendFinalize(d_)); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// dims in N, C, H, W order (K, C, R, S for filters); strides say the layout.
Desc tensor(std::int64_t id, cudnnDataType_t type, const std::array<std::int64_t, 4>& dims,
            const std::array<std::int64_t, 4>& strides) {
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t alignment = 16;
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4);
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4);
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment);
  t.finalize();
  return t;
}

// Channels-last strides of (n, c, h, w) dims.
std::array<std::int64_t, 4> nhwc(const std::array<std::int64_t, 4>& d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}
std::array<std::int64_t, 4> nchw(const std::array<std::int64_t, 4>& d) {
  return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
}

enum class Op { forward, data, filter };
const char* op_name(Op op) {
  return op == Op::forward ? "forward" : op == Op::data ? "backward-data" : "backward-filter";
}

// An engine configuration's knob settings, (type, value) in cuDNN's order: with the engine's
// index, what tells two configurations apart.
using Knobs = std::vector<std::pair<std::int64_t, std::int64_t>>;

// One op's operation graph, and the descriptors it refers to.
struct OpGraph {
  std::vector<Desc> keep;  // tensors, convolution and operation descriptors
  std::unique_ptr<Desc> graph;
};

// An execution plan for one op, with the graph it was made from (kept alive with it).
struct OpPlan {
  Op op = Op::forward;
  std::shared_ptr<const OpGraph> graph;
  std::unique_ptr<Desc> plan;
  std::int64_t workspace = 0;
  std::int64_t engine = -1;  // cuDNN's global engine index
  Knobs knobs;               // and its configuration's knobs
  float us = 0.f;            // its GPU time per call, timed in a CUDA graph
  // The variant pack of the last call's pointers: a step calls with the same ones every time.
  mutable std::unique_ptr<Desc> pack;
  mutable std::array<void*, 4> pack_pointers{};

  void run(cudnnHandle_t h, void* a, void* b, void* c, void* workspace_ptr) const;
};

void OpPlan::run(cudnnHandle_t h, void* x, void* w, void* y, void* workspace_ptr) const {
  const std::array<void*, 4> now{x, w, y, workspace_ptr};
  if (!pack || now != pack_pointers) {
    auto p = std::make_unique<Desc>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const std::array<std::int64_t, 3> ids{kX, kW, kY};
    std::array<void*, 3> data{x, w, y};
    p->set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids.data(), 3);
    p->set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, data.data(), 3);
    p->set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace_ptr);
    p->finalize();
    pack = std::move(p);
    pack_pointers = now;
  }
  SWEEP_CHECK_CUDNN(cudnnBackendExecute(h, plan->get(), pack->get()));
}

// op's single-node graph on activations of `type` (channels-last); the weights (or their
// gradient) of `type` in K,R,S,C, or fp32 in the parameters' K,C,R,S when `filter_nchw` (the
// weight gradient only).
std::shared_ptr<const OpGraph> build_graph(cudnnHandle_t h, const ConvGeom& g, Op op,
                                           cudnnDataType_t type, bool filter_nchw) {
  auto p = std::make_shared<OpGraph>();
  const std::array<std::int64_t, 4> xd{g.n, g.c, g.h, g.w}, yd{g.n, g.k, g.out_h, g.out_w},
      wd{g.k, g.c, g.r, g.s};
  p->keep.reserve(5);  // x, w and y are referred to below while the others are added
  p->keep.push_back(tensor(kX, type, xd, nhwc(xd)));
  p->keep.push_back(
      tensor(kW, filter_nchw ? CUDNN_DATA_FLOAT : type, wd, filter_nchw ? nchw(wd) : nhwc(wd)));
  p->keep.push_back(tensor(kY, type, yd, nhwc(yd)));
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::int64_t spatial = 2;
  const std::array<std::int64_t, 2> dilation{1, 1}, stride{g.stride_h, g.stride_w},
      pad{g.pad_h, g.pad_w};
  conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
  conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode);
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial);
  conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dilation.data(), 2);
  conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, stride.data(), 2);
  conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pad.data(), 2);
  conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pad.data(), 2);
  conv.finalize();
  const float alpha = 1.f, beta = 0.f;
  const Desc &x = p->keep[0], &w = p->keep[1], &y = p->keep[2];
  std::unique_ptr<Desc> node;
  switch (op) {
    case Op::forward:
      node = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta);
      break;
    case Op::data:
      node = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, y);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, &alpha);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, &beta);
      break;
    case Op::filter:
      node = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, w);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, y);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, &alpha);
      node->set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, &beta);
      break;
  }
  node->finalize();
  p->keep.push_back(std::move(conv));
  p->graph = std::make_unique<Desc>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  const cudnnBackendDescriptor_t ops = node->get();
  p->graph->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &ops);
  p->graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h);
  p->graph->finalize();
  p->keep.push_back(std::move(*node));
  return p;
}

// Whether an engine's numerical notes allow it: fp32 reduction, no FFT or Winograd (they lose
// digits; the legacy path rejects them too). On fp32 tensors the tensor-core engines (tf32, which
// cuDNN notes as down-converting the inputs) are allowed: this plan serves tf32 mode.
bool acceptable(cudnnBackendDescriptor_t config) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  std::int64_t got = 0;
  SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                             CUDNN_TYPE_NUMERICAL_NOTE, std::int64_t(notes.size()),
                                             &got, notes.data()));
  for (std::int64_t i = 0; i < got; ++i) switch (notes[std::size_t(i)]) {
      case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION:
      case CUDNN_NUMERICAL_NOTE_FFT:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
      case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
        return false;
      default:
        break;
    }
  return true;
}

std::int64_t engine_index(cudnnBackendDescriptor_t config) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  std::int64_t got = 0, index = -1;
  SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &e));
  SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                             &got, &index));
  return index;
}

// The descriptors attribute `name` of d holds, received into new descriptors of `type`.
std::vector<Desc> descriptors_in(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                 cudnnBackendDescriptorType_t type) {
  std::int64_t count = 0;
  SWEEP_CHECK_CUDNN(
      cudnnBackendGetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<Desc> out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    out.emplace_back(type);
    raw.push_back(out.back().get());
  }
  std::int64_t got = 0;
  if (count > 0)
    SWEEP_CHECK_CUDNN(
        cudnnBackendGetAttribute(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()));
  while (std::int64_t(out.size()) > got) out.pop_back();  // Desc moves, but is not assignable
  return out;
}

Knobs knobs_of(cudnnBackendDescriptor_t config) {
  const std::vector<Desc> choices = descriptors_in(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                                   CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
  Knobs knobs;
  for (const Desc& choice : choices) {
    cudnnBackendKnobType_t type{};
    std::int64_t value = 0, n = 0;
    SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                               CUDNN_TYPE_KNOB_TYPE, 1, &n, &type));
    SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(choice.get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                               CUDNN_TYPE_INT64, 1, &n, &value));
    knobs.emplace_back(std::int64_t(type), value);
  }
  return knobs;
}

std::string describe_knobs(const Knobs& knobs) {
  std::string s;
  for (const auto& [type, value] : knobs) {
    char part[48];
    std::snprintf(part, sizeof part, "%s%lld=%lld", s.empty() ? "" : ",",
                  static_cast<long long>(type), static_cast<long long>(value));
    s += part;
  }
  return s;
}

struct Candidate {
  std::unique_ptr<Desc> plan;
  std::int64_t workspace = 0, engine = -1;
  Knobs knobs;
};

// The heuristics' engine configurations for p's graph that pass `acceptable`, finalise and fit
// the limit, in the heuristics' order (mode A's, else the fallback list's), at most
// kMaxCandidates; only the configuration (only_engine, only_knobs) when
// only_engine is not -1 (a choice made before: the others are not finalised, which is most of the
// cost).
std::vector<Candidate> candidates(cudnnHandle_t h, const OpGraph& p, std::size_t limit,
                                  std::int64_t only_engine = -1, const Knobs& only_knobs = {}) {
  std::vector<Candidate> out;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    if (mode == CUDNN_HEUR_MODE_FALLBACK && !out.empty()) break;
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *p.graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
    if (cudnnBackendFinalize(heur.get()) != CUDNN_STATUS_SUCCESS) continue;
    const std::vector<Desc> configs = descriptors_in(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                     CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    for (std::size_t i = 0; i < configs.size() && int(out.size()) < kMaxCandidates; ++i) {
      cudnnBackendDescriptor_t config = configs[i].get();
      const std::int64_t index = engine_index(config);
      const Knobs knobs = knobs_of(config);
      if (only_engine >= 0 && (index != only_engine || knobs != only_knobs)) continue;
      const bool seen = std::any_of(out.begin(), out.end(), [&](const Candidate& c) {
        return c.engine == index && c.knobs == knobs;
      });
      if (seen || !acceptable(config)) continue;
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &config);
      if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS) continue;
      std::int64_t workspace = 0, n = 0;
      SWEEP_CHECK_CUDNN(cudnnBackendGetAttribute(plan->get(),
                                                 CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                 CUDNN_TYPE_INT64, 1, &n, &workspace));
      if (workspace < 0 || std::size_t(workspace) > limit) continue;
      out.push_back({std::move(plan), workspace, index, knobs});
    }
  }
  return out;
}

// SWEEP_CUDNN_LOG=2: every candidate's time, not only the choice.
bool log_every_candidate() {
  const char* v = std::getenv("SWEEP_CUDNN_LOG");
  return v && std::string(v) == "2";
}

DeviceMemory device_zeros(std::size_t bytes, cudaStream_t s) {
  void* p = nullptr;
  SWEEP_CHECK_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 16)));
  DeviceMemory m;
  m.adopt(p, std::max<std::size_t>(bytes, 16));
  SWEEP_CHECK_CUDA(cudaMemsetAsync(p, 0, m.bytes(), s));
  return m;
}

// What the timing chose for one op of a shape: its engine, the weight gradient's layout and the
// time, kept for the process (chosen_plans).
struct OpChoice {
  std::int64_t engine = -1;
  Knobs knobs;
  bool filter_nchw = false;
  float us = 0.f;
};
// Device, the geometry, the FilterGradient mode, the activations' type.
using ChoiceKey = std::array<int, 15>;

// The choices made so far in this process. A fused array's members build the same shapes' plans
// one after another; timing up to 8 finalised candidates per op for each member cost an array of
// 64 bf16 LeNets 6.6 s of start-up (H200), where the first member's choice serves them all.
// Earlier processes' choices come from the tuning cache (trainer/tuning_cache.h).
std::mutex choices_mutex;
std::map<ChoiceKey, std::array<OpChoice, 3>> chosen_plans;

constexpr const char* kTuningKind = "nhwc_conv_plan";

// A choice as the tuning cache keeps it: for each op its engine, fp32 K,C,R,S weight gradient or
// not, time, knob count, then each knob's type and value.
std::vector<double> encode(const std::array<OpChoice, 3>& made) {
  std::vector<double> v;
  for (const OpChoice& c : made) {
    v.insert(v.end(),
             {double(c.engine), c.filter_nchw ? 1.0 : 0.0, double(c.us), double(c.knobs.size())});
    for (const auto& [knob, value] : c.knobs) v.insert(v.end(), {double(knob), double(value)});
  }
  return v;
}

// The choice back, or none where the numbers are not one encode() wrote.
std::optional<std::array<OpChoice, 3>> decode(const std::vector<double>& v) {
  std::array<OpChoice, 3> made;
  std::size_t at = 0;
  const auto whole = [](double x) { return x == double(std::int64_t(x)); };
  for (OpChoice& c : made) {
    if (at + 4 > v.size() || !whole(v[at]) || !whole(v[at + 3]) || v[at + 3] < 0)
      return std::nullopt;
    c.engine = std::int64_t(v[at]);
    c.filter_nchw = v[at + 1] != 0;
    c.us = float(v[at + 2]);
    const std::size_t knobs = std::size_t(v[at + 3]);
    at += 4;
    if (knobs > (v.size() - at) / 2) return std::nullopt;
    for (std::size_t k = 0; k < knobs; ++k, at += 2) {
      if (!whole(v[at]) || !whole(v[at + 1])) return std::nullopt;
      c.knobs.emplace_back(std::int64_t(v[at]), std::int64_t(v[at + 1]));
    }
  }
  if (at != v.size()) return std::nullopt;
  return made;
}

}  // namespace

struct NhwcConvPlan::Impl {
  std::array<OpPlan, 3> ops;  // forward, data, filter
  bool filter_nchw = false;
  cudnnDataType_t type = CUDNN_DATA_BFLOAT16;
};

NhwcConvPlan::NhwcConvPlan(cudnnHandle_t h, const ConvGeom& g, Storage storage, std::size_t limit,
                           FilterGradient filter_gradient)
    : impl_(std::make_unique<Impl>()) {
  if (!is_nhwc(storage)) throw Error("cuda: a channels-last convolution plan on NCHW tensors");
  const bool bf16 = is_bf16(storage);
  impl_->type = bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  cudaStream_t stream = nullptr;
  SWEEP_CHECK_CUDNN(cudnnGetStream(h, &stream));
  int device = 0;
  SWEEP_CHECK_CUDA(cudaGetDevice(&device));
  const ChoiceKey key{
      device,      g.n,        g.c,        g.h,     g.w,     g.k,     g.r,
      g.s,         g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.out_h, int(filter_gradient),
      int(storage)};
  if (adopt_choice(h, g, limit, key)) return;
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.k * g.out_h * g.out_w,
                    nw = std::size_t(g.k) * g.c * g.r * g.s;
  // Zeros to time on (an engine's speed does not depend on the values); the filter gradient's
  // as fp32.
  const std::size_t bytes = storage_bytes(storage, 1);
  DeviceMemory x = device_zeros(nx * bytes, stream), y = device_zeros(ny * bytes, stream),
               w = device_zeros(nw * sizeof(float), stream);
  for (Op op : {Op::forward, Op::data, Op::filter}) {
    // The weight gradient in the plan's type (K,R,S,C) or in fp32 K,C,R,S, whichever an engine
    // runs faster: some shapes have fast engines for one and only a slow one (or none) for the
    // other (measured in bf16: 30 us against 1.5 ms). The first costs the caller a conversion of
    // the gradient, a few microseconds.
    std::vector<bool> filter_layouts;  // whether fp32 K,C,R,S
    if (op != Op::filter || filter_gradient != FilterGradient::nchw_fp32)
      filter_layouts.push_back(false);
    if (op == Op::filter && filter_gradient != FilterGradient::nhwc) filter_layouts.push_back(true);
    float best_us = std::numeric_limits<float>::infinity();  // with the handicap
    for (const bool filter_nchw : filter_layouts) {
      const float handicap = op == Op::filter && bf16 && !filter_nchw ? kBf16GradientHandicap : 1.f;
      const std::shared_ptr<const OpGraph> graph = build_graph(h, g, op, impl_->type, filter_nchw);
      std::vector<Candidate> found = candidates(h, *graph, limit);
      std::int64_t most = 0;
      for (const Candidate& c : found) most = std::max(most, c.workspace);
      DeviceMemory ws = device_zeros(std::size_t(most), stream);
      for (Candidate& c : found) {
        OpPlan p;
        p.op = op;
        p.graph = graph;
        p.plan = std::move(c.plan);
        p.workspace = c.workspace;
        p.engine = c.engine;
        p.knobs = c.knobs;
        try {
          // Every op reads and writes by tensor id (x or dx, w or dw, y or dy): one call.
          const auto call = [&] { p.run(h, x.get(), w.get(), y.get(), ws.get()); };
          // One call first: an engine several times slower than the best so far (some take
          // 100x, tens of ms a call) is not timed in full, which would cost start-up seconds.
          p.us = graph_time_us(stream, call, 1, 1);
          if (p.us * handicap > kProbeMargin * best_us + kProbeSlackUs) continue;
          p.us = graph_time_us(stream, call, kCallsPerGraph, kTimedReplays);
        } catch (const Error&) {  // an engine that cannot run in a CUDA graph is not a candidate
          continue;
        }
        if (log_every_candidate())
          std::fprintf(stderr, "sweep: conv n%d c%d %dx%d k%d %s%s engine %lld [%s] %.1f us\n", g.n,
                       g.c, g.h, g.w, g.k, op_name(op), filter_nchw ? " (fp32 K,C,R,S)" : "",
                       static_cast<long long>(p.engine), describe_knobs(p.knobs).c_str(),
                       double(p.us));
        if (!(p.us * handicap < best_us)) continue;
        best_us = p.us * handicap;
        p.pack.reset();  // its pointers were the timing's
        impl_->ops[std::size_t(op)] = std::move(p);
        if (op == Op::filter) impl_->filter_nchw = filter_nchw;
      }
    }
    if (!(best_us < std::numeric_limits<float>::infinity()))
      throw Error(std::string("cuDNN offers no ") + (bf16 ? "bf16 " : "fp32 channels-last ") +
                  op_name(op) + " engine for this convolution that runs in a CUDA graph within a " +
                  std::to_string(limit >> 20) + " MiB workspace");
  }
  SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream));  // the zeros are freed next
  std::array<OpChoice, 3> made;
  for (std::size_t i = 0; i < 3; ++i) {
    const OpPlan& p = impl_->ops[i];
    made[i] = {p.engine, p.knobs, i == 2 && impl_->filter_nchw, p.us};
  }
  keep_choice(device, kTuningKind, choice_key(key), encode(made));
  const std::lock_guard<std::mutex> lock(choices_mutex);
  chosen_plans.emplace(key, made);
}

// Builds the plans chosen before for this key, untimed; false when there is none, or when an
// engine chosen then cannot be made now (then the caller times afresh).
bool NhwcConvPlan::adopt_choice(cudnnHandle_t h, const ConvGeom& g, std::size_t limit,
                                const std::array<int, 15>& key) {
  std::array<OpChoice, 3> made;
  {
    const std::lock_guard<std::mutex> lock(choices_mutex);
    const auto it = chosen_plans.find(key);
    if (it != chosen_plans.end()) {
      made = it->second;
    } else {
      const auto kept = kept_choice(key[0], kTuningKind, choice_key(key));
      const std::optional<std::array<OpChoice, 3>> decoded =
          kept ? decode(*kept) : std::optional<std::array<OpChoice, 3>>();
      if (!decoded) return false;
      made = *decoded;  // kept in chosen_plans only once its engines are made below
    }
  }
  for (Op op : {Op::forward, Op::data, Op::filter}) {
    const OpChoice& c = made[std::size_t(op)];
    const std::shared_ptr<const OpGraph> graph = build_graph(h, g, op, impl_->type, c.filter_nchw);
    std::vector<Candidate> found = candidates(h, *graph, limit, c.engine, c.knobs);
    if (found.empty()) return false;
    OpPlan& p = impl_->ops[std::size_t(op)];
    p.op = op;
    p.graph = graph;
    p.plan = std::move(found.front().plan);
    p.workspace = found.front().workspace;
    p.engine = c.engine;
    p.knobs = c.knobs;
    p.us = c.us;
  }
  impl_->filter_nchw = made[2].filter_nchw;
  const std::lock_guard<std::mutex> lock(choices_mutex);
  chosen_plans.emplace(key, made);  // a no-op when it came from there
  return true;
}

NhwcConvPlan::~NhwcConvPlan() = default;

Storage NhwcConvPlan::storage() const {
  return impl_->type == CUDNN_DATA_BFLOAT16 ? Storage::bf16_nhwc : Storage::fp32_nhwc;
}

std::size_t NhwcConvPlan::workspace_bytes() const {
  std::int64_t most = 0;
  for (const OpPlan& p : impl_->ops) most = std::max(most, p.workspace);
  return std::size_t(most);
}

bool NhwcConvPlan::filter_gradient_nchw() const { return impl_->filter_nchw; }

std::string NhwcConvPlan::describe() const {
  std::string s;
  for (const OpPlan& p : impl_->ops) {
    char part[256];
    std::snprintf(part, sizeof part, "%s%s engine %lld [%s] (%.1f us)", s.empty() ? "" : ", ",
                  op_name(p.op), static_cast<long long>(p.engine), describe_knobs(p.knobs).c_str(),
                  double(p.us));
    s += part;
  }
  return s + (impl_->filter_nchw ? ", fp32 K,C,R,S weight gradient" : ", K,R,S,C weight gradient");
}

void NhwcConvPlan::forward(cudnnHandle_t h, const void* x, const void* w, void* y,
                           void* workspace) const {
  impl_->ops[0].run(h, const_cast<void*>(x), const_cast<void*>(w), y, workspace);
}

void NhwcConvPlan::backward_data(cudnnHandle_t h, const void* w, const void* dy, void* dx,
                                 void* workspace) const {
  impl_->ops[1].run(h, dx, const_cast<void*>(w), const_cast<void*>(dy), workspace);
}

void NhwcConvPlan::backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw,
                                   void* workspace) const {
  impl_->ops[2].run(h, const_cast<void*>(x), dw, const_cast<void*>(dy), workspace);
}

}  // namespace sweep::trainer::cuda

#pragma GCC diagnostic pop
