/*
 * cudnn_graph.cpp — NhwcConvPlan (cudnn_graph.h): for each convolution op the fastest of the
 * candidate plans cudnn_graph_engines.h finds, each timed in a CUDA graph, and the choices kept
 * for the process (a fused array's later members) and in the tuning cache (later processes).
 *
 * Built, as cudnn_graph_engines.cpp, with CUDNN_WARN_DEPRECATED undefined: the status check
 * (SWEEP_CHECK_CUDNN) names a status cuDNN 9 marks deprecated.
 */
#undef CUDNN_WARN_DEPRECATED

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
#include "trainer/cuda/cudnn_graph_engines.h"
#include "trainer/cuda/graph_timing.h"
#include "trainer/cuda/tuning_fingerprint.h"

namespace sweep::trainer::cuda {

namespace {

using namespace graph_api;

constexpr int kCallsPerGraph = 10;
// A candidate whose one-call probe (launch latency included) takes longer than kProbeMargin times
// the best so far plus kProbeSlackUs is not timed in full.
constexpr float kProbeMargin = 3.f, kProbeSlackUs = 20.f;
constexpr int kTimedReplays = 3;
// A bf16 weight gradient must be this much faster than the best fp32 one to be taken: rounding
// the gradient to bf16 (as autocast does) costs accuracy (CudaBf16Train.ConvBlockNetWithAdam),
// and an fp32 gradient is about as fast on the deeper layers; only where the fp32 engines are
// several times slower does bf16 win.
constexpr float kBf16GradientHandicap = 1.25f;

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
// one after another, and the first member's choice serves them all: timing up to 8 finalised
// candidates per op again for each member would multiply the array's start-up by its size.
// Earlier processes' choices come from the tuning cache (trainer/backend/tuning_cache.h).
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
    // other, many times slower. The first costs the caller a conversion of
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
