/*
 * cudnn_graph_engines.cpp — the graph API's building blocks of cudnn_graph_engines.h: tensor,
 * convolution and operation descriptors, the heuristics' engine configurations filtered by their
 * numerical notes, and the execution plans finalised from them.
 *
 * The operation graph and the execution plans are given the handle through
 * CUDNN_ATTR_*_HANDLE, which cuDNN 9 marks deprecated (in favour of device-property descriptors
 * for building plans without a GPU, which we never do); the pragma keeps a build that defines
 * CUDNN_WARN_DEPRECATED quiet.
 */
#undef CUDNN_WARN_DEPRECATED
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "trainer/cuda/cudnn_graph_engines.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"

namespace sweep::trainer::cuda::graph_api {

namespace {

// Engine configurations timed per op, in the heuristics' order: mode A's list only (mode B's
// beside it holds no faster engine at our shapes and doubles the start-up's timings).
constexpr int kMaxCandidates = 8;
constexpr std::int64_t kX = 1, kW = 2, kY = 3;  // tensor ids: x (or dx), w (or dw), y (or dy)

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

}  // namespace

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

std::vector<Candidate> candidates(cudnnHandle_t h, const OpGraph& p, std::size_t limit,
                                  std::int64_t only_engine, const Knobs& only_knobs) {
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

}  // namespace sweep::trainer::cuda::graph_api

#pragma GCC diagnostic pop
