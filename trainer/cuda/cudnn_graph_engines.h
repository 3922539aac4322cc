/*
 * cudnn_graph_engines.h — what NhwcConvPlan (cudnn_graph.cpp) builds its plans from in cuDNN's
 * graph (backend) API: descriptors owned as RAII values, one convolution op's single-node operation
 * graph, the engine configurations cuDNN's heuristics offer for it that our numerical rules accept,
 * each finalised into an execution plan, and running such a plan on a call's pointers.
 */
#pragma once

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda::graph_api {

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

enum class Op { forward, data, filter };
inline const char* op_name(Op op) {
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

// op's single-node graph on activations of `type` (channels-last); the weights (or their
// gradient) of `type` in K,R,S,C, or fp32 in the parameters' K,C,R,S when `filter_nchw` (the
// weight gradient only).
std::shared_ptr<const OpGraph> build_graph(cudnnHandle_t h, const ConvGeom& g, Op op,
                                           cudnnDataType_t type, bool filter_nchw);

// A configuration's knobs as "type=value,..." for the logs.
std::string describe_knobs(const Knobs& knobs);

// A finalised execution plan and the configuration it was made from.
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
                                  std::int64_t only_engine = -1, const Knobs& only_knobs = {});

}  // namespace sweep::trainer::cuda::graph_api
