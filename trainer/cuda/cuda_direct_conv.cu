/*
 * cuda_direct_conv.cu — the timed choices of how a convolution shape runs: which of its ops run on
 * our direct kernels (direct_conv.h) rather than on cuDNN's plan, and in bf16 mode whether the
 * bf16 (channels-last) plan or the tf32 plan runs it. Timed once per shape on a machine (kept in
 * the tuning cache, trainer/backend/tuning_cache.h, for later processes), both sides as a training
 * step runs them (graph_timing.h).
 */
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <mutex>
#include <vector>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/graph_timing.h"
#include "trainer/cuda/nhwc_wgrad.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/tiled_conv.h"
#include "trainer/cuda/tuning_fingerprint.h"

namespace sweep::trainer::cuda {

namespace {

constexpr int kCallsPerGraph = 10;
constexpr int kTimedReplays = 3;
// Timings of each candidate, in turn, whose best counts (every choice here).
constexpr int kTimingRounds = 3;
// Calls in flight at once when timing for a shared GPU (all branches together): enough to keep
// `share` of them running side by side, without ten calls on every branch: each call timed is
// start-up time that every fused array's members pay before training.
constexpr int kSharedCalls = 16;
// Sharing the GPU, cuDNN's plan is taken only when faster than ours by more than this: the timing
// runs copies of one op, not the mix of ops that a fused array's members run side by side, so a
// small lead of cuDNN's in it is noise that can go either way in training. Ours also add in a
// fixed order: the same bits every run.
constexpr float kSharedCudnnMargin = 1.1f;

template <class Op>
float graph_us(cudaStream_t stream, Op&& op) {
  return graph_time_us(stream, op, kCallsPerGraph, kTimedReplays);
}

// A timed choice holds for the process and is kept in the tuning cache for the next ones (as
// cudnnFind's, cudnn_legacy.cpp): every later backend with the same device, math and shape, a
// fused array's members included, reuses it.
using ChoiceKey = std::array<int, 15>;

}  // namespace

bool CudaBackend::takes(double impl, bool direct, bool tiled, bool scatter) {
  return impl == double(int(ConvImpl::cudnn)) ||
         (impl == double(int(ConvImpl::direct)) && direct) ||
         (impl == double(int(ConvImpl::tiled)) && tiled) ||
         (impl == double(int(ConvImpl::scatter)) && scatter);
}

void CudaBackend::inherit_direct_conv(const ConvGeom& g, bool direct, bool tiled, bool tiled_filter,
                                      bool scatter, ConvEntry& e) const {
  const auto full = conv_plans_.find(conv_key(g, tuned_batch_));
  if (full == conv_plans_.end() || full->second.nhwc) return;
  const ConvEntry& t = full->second;
  if (takes(int(t.forward), direct, tiled, false)) e.forward = t.forward;
  if (takes(int(t.data), direct, tiled, scatter)) e.data = t.data;
  if (takes(int(t.filter), direct, tiled_filter, false)) e.filter = t.filter;
}

// Deterministic mode times nothing (a timing, and so the choice it makes, could differ between
// processes). Our tiled and scatter kernels add in a fixed order, which depends on their plans
// only through how they slice the sums (the forward's channels, the scatter's filters, the weight
// gradient's image chunks and rows): each op keeps the order of its plan for
// deterministic_order_sms() whatever the share, cut for the step's share where that plan slices
// alike (tiled_conv_forward_sms, scatter_dgrad_sms; the weight gradient's chunks follow the SMs,
// so it always runs the canonical plan). So a fused member computes its lone run's bits. They run
// a shape of at most kDeterministicOursMacs multiply-adds an image (LeNet's layers: 0.3M and
// 1.6M), where they beat cuDNN's deterministic algorithms by far; wider layers (the conv-block
// net's 3x3 layers of 32-128 channels, 9.4M an image) keep cuDNN's deterministic plan, which is
// faster there (bench/RESULTS.md).
void CudaBackend::choose_deterministic_conv(const ConvGeom& g, bool tiled, bool scatter,
                                            ConvEntry& e) const {
  constexpr double kDeterministicOursMacs = 4e6;
  const double macs = double(g.k) * g.c * g.r * g.s * g.out_h * g.out_w;
  if (macs > kDeterministicOursMacs) return;
  const int order = deterministic_order_sms();
  if (tiled) {
    e.forward = ConvImpl::tiled;
    e.forward_sms = tiled_conv_forward_sms(g, sm_count_, order);
  }
  // The scatter kernel packs better where the GPU is shared (alone the two run alike), so it
  // takes the data gradient wherever it fits.
  if (scatter) {
    e.data = ConvImpl::scatter;
    e.data_sms = scatter_dgrad_sms(g, sm_count_, order);
  } else if (tiled) {
    e.data = ConvImpl::tiled;
    e.data_sms = tiled_conv_data_sms(g, sm_count_, order);
  }
  if (tiled_conv_filter_fits(g, order)) {
    e.filter = ConvImpl::tiled;
    e.filter_sms = order;
  }
}

void CudaBackend::choose_direct_conv(const ConvGeom& g, bool timed, ConvEntry& e) {
  if (sm_count_ == 0) sm_count_ = shared_sm_count();
  e.forward_sms = e.data_sms = e.filter_sms = sm_count_;
  const bool direct = direct_conv_fits(g), tiled = tiled_conv_fits(g),
             tiled_filter = tiled_conv_filter_fits(g, sm_count_), scatter = scatter_dgrad_fits(g);
  // A channels-last plan runs the shape's three ops on cuDNN's engines; ours are NCHW only.
  if (e.nhwc || direct_conv_ == DirectConv::never || !(direct || tiled)) return;
  e.filter_parts = direct_conv_filter_parts(g, sm_count_);
  if (direct_conv_ != DirectConv::timed) {
    const bool want_tiled =
        direct_conv_ == DirectConv::tiled || direct_conv_ == DirectConv::scatter;
    const ConvImpl ours = tiled && (want_tiled || !direct) ? ConvImpl::tiled : ConvImpl::direct;
    e.forward = e.data = ours;
    if (direct_conv_ == DirectConv::scatter && scatter) e.data = ConvImpl::scatter;
    e.filter = tiled_filter && (want_tiled || !direct) ? ConvImpl::tiled
               : direct                                ? ConvImpl::direct
                                                       : ConvImpl::cudnn;
    return;
  }
  if (deterministic_) return choose_deterministic_conv(g, tiled, scatter, e);
  // Shapes that run rarely (a partial batch) are not timed: timing them costs more than it saves.
  // They take the kernels timed for the same layer at the tuned batch, where those take the shape,
  // rather than cuDNN's heuristic plan, whose weight gradient adds with atomics: ours add in a
  // fixed order, so repeated runs of one sweep end with the same accuracies.
  if (!timed) {
    if (tuned_batch_ > 0) inherit_direct_conv(g, direct, tiled, tiled_filter, scatter, e);
    return;
  }
  static std::mutex mutex;
  const ChoiceKey key{
      device_, int(e.plan->math()), g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.pad_h, g.pad_w, g.out_h,
      g.out_w, sm_count_,           0};
  std::lock_guard<std::mutex> lock(mutex);  // one timing per shape, even from many threads
  // A kept choice is taken only where it names a kernel that takes the shape (else: timed anew).
  if (const auto kept = kept_choice(device_, "conv_kernels", choice_key(key));
      kept && kept->size() == 3 && takes((*kept)[0], direct, tiled, false) &&
      takes((*kept)[1], direct, tiled, scatter) && takes((*kept)[2], direct, tiled_filter, false)) {
    e.forward = ConvImpl(int((*kept)[0]));
    e.data = ConvImpl(int((*kept)[1]));
    e.filter = ConvImpl(int((*kept)[2]));
    return;
  }
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  const std::size_t nw = std::size_t(g.k) * g.c * g.r * g.s;
  // Zeros: neither side's speed depends on the values.
  DeviceBuffer x(*this, nx * sizeof(float)), y(*this, ny * sizeof(float)),
      w(*this, nw * sizeof(float)), dx(*this, nx * sizeof(float)), dw(*this, nw * sizeof(float)),
      db(*this, std::size_t(g.k) * sizeof(float));
  for (const DeviceBuffer* b : {&x, &y, &w, &dx, &dw, &db})
    SWEEP_CHECK_CUDA(cudaMemsetAsync(b->as<void>(), 0, b->bytes(), stream()));
  const ConvPlan& plan = *e.plan;
  void* ws = conv_workspace(plan.workspace_bytes());
  float* scratch = scratch_floats(std::max(direct_conv_filter_scratch(g, e.filter_parts),
                                           tiled_conv_filter_scratch(g, sm_count_)));
  const int sms = sm_count_;
  // Timed as the step will run: alone (share 1), or on `share` streams at once, as that many
  // members of a fused array share the GPU (all of them: timed on 8, a kernel planned for 16 ran
  // on half a GPU); then what counts is each call's share of the time, and kernels that fill the
  // GPU alone lose to ones that pack. cuDNN's calls follow the branch by the handle's stream.
  std::vector<Stream> extra;
  std::vector<cudaStream_t> branches{stream()};
  for (int b = 1; b < share_; ++b) {
    extra.push_back(make_stream());
    branches.push_back(extra.back().get());
  }
  const auto timed_us = [&](auto&& op) {
    const int branch_count = static_cast<int>(branches.size());
    const int calls = branch_count == 1 ? kCallsPerGraph : std::max(1, kSharedCalls / branch_count);
    return graph_time_us(stream(), branches, op, calls, kTimedReplays);
  };
  const auto on = [&](cudaStream_t st) { SWEEP_CHECK_CUDNN(cudnnSetStream(dnn(), st)); };
  // The fastest of cuDNN's plan and whichever of ours take the shape. Forward: cuDNN's side adds
  // the bias in a launch of its own (not counted: ours is then ahead).
  const bool log = std::getenv("SWEEP_CUDNN_LOG") != nullptr;
  // The data gradient has a fourth candidate, the scatter kernel (scatter_op where scatter_fits).
  const auto fastest = [&](const char* op, bool tiled_fits, auto&& cudnn_op, auto&& direct_op,
                           auto&& tiled_op, bool scatter_fits = false,
                           const std::function<void(cudaStream_t)>& scatter_op = {}) {
    // Each candidate's best of kTimingRounds timings, taken in turn: a transient (the driver held
    // by another thread, another process's kernels) slows one timing, not all of them, and the
    // tuning cache keeps the choice for every later process. A negative time: that kernel does
    // not take the shape.
    constexpr float kNone = std::numeric_limits<float>::infinity();
    float cudnn_us = kNone, direct_us = direct ? kNone : -1.f, tiled_us = tiled_fits ? kNone : -1.f,
          scatter_us = scatter_fits ? kNone : -1.f;
    for (int round = 0; round < kTimingRounds; ++round) {
      try {
        cudnn_us = std::min(cudnn_us, timed_us(cudnn_op));
      } catch (...) {
        on(stream());
        throw;
      }
      on(stream());
      if (direct) direct_us = std::min(direct_us, timed_us(direct_op));
      if (tiled_fits) tiled_us = std::min(tiled_us, timed_us(tiled_op));
      if (scatter_fits) scatter_us = std::min(scatter_us, timed_us(scatter_op));
    }
    ConvImpl best = ConvImpl::cudnn;
    float best_us = share_ > 1 ? cudnn_us * kSharedCudnnMargin : cudnn_us;
    if (direct && direct_us < best_us) best = ConvImpl::direct, best_us = direct_us;
    if (tiled_fits && tiled_us < best_us) best = ConvImpl::tiled, best_us = tiled_us;
    if (scatter_fits && scatter_us < best_us) best = ConvImpl::scatter, best_us = scatter_us;
    if (log)
      std::fprintf(stderr,
                   "sweep: conv n%d c%d %dx%d k%d %dx%d share %d %s: cuDNN %.2f, direct %.2f, "
                   "tiled %.2f, scatter %.2f us a call\n",
                   g.n, g.c, g.h, g.w, g.k, g.r, g.s, share_, op, double(cudnn_us),
                   double(direct_us), double(tiled_us), double(scatter_us));
    return best;
  };
  e.forward = fastest(
      "forward", tiled,
      [&](cudaStream_t st) {
        on(st);
        plan.forward(dnn(), x.f(), w.f(), y.f(), ws);
      },
      [&](cudaStream_t st) { direct_conv_forward(g, x.f(), w.f(), nullptr, y.f(), st); },
      [&](cudaStream_t st) { tiled_conv_forward(g, x.f(), w.f(), nullptr, y.f(), sms, st); });
  e.data = fastest(
      "data gradient", tiled,
      [&](cudaStream_t st) {
        on(st);
        plan.backward_data(dnn(), w.f(), y.f(), dx.f(), ws);
      },
      [&](cudaStream_t st) { direct_conv_backward_data(g, w.f(), y.f(), dx.f(), st); },
      [&](cudaStream_t st) { tiled_conv_backward_data(g, w.f(), y.f(), dx.f(), sms, st); }, scatter,
      [&](cudaStream_t st) { scatter_dgrad(g, w.f(), y.f(), dx.f(), sms, st); });
  // The direct and tiled weight gradients also sum the bias gradient (not counted for cuDNN).
  e.filter = fastest(
      "filter gradient", tiled_filter,
      [&](cudaStream_t st) {
        on(st);
        plan.backward_filter(dnn(), x.f(), y.f(), dw.f(), ws);
      },
      [&](cudaStream_t st) {
        direct_conv_backward_filter(g, x.f(), y.f(), dw.f(), nullptr, e.filter_parts, scratch, st);
      },
      [&](cudaStream_t st) {
        tiled_conv_backward_filter(g, x.f(), y.f(), dw.f(), nullptr, sms, scratch, st);
      });
  keep_choice(device_, "conv_kernels", choice_key(key),
              {double(int(e.forward)), double(int(e.data)), double(int(e.filter))});
}

bool CudaBackend::nhwc_runs_faster(const ConvGeom& g, const NhwcConvPlan& nhwc,
                                   const ConvPlan& legacy) {
  static std::mutex mutex;
  const ChoiceKey key{device_, g.n,     g.c,     g.h,        g.w,
                      g.k,     g.r,     g.s,     g.stride_h, g.stride_w,
                      g.pad_h, g.pad_w, g.out_h, g.out_w,    int(nhwc.storage())};
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto kept = kept_choice(device_, "nhwc_conv_faster", choice_key(key));
      kept && kept->size() == 1)
    return (*kept)[0] != 0;
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  const std::size_t nw = std::size_t(g.k) * g.c * g.r * g.s;
  DeviceBuffer x(*this, nx * sizeof(float)), y(*this, ny * sizeof(float)),
      w(*this, nw * sizeof(float)), dx(*this, nx * sizeof(float)), dw(*this, nw * sizeof(float));
  // As a layer runs it: x's converted copy kept from the forward for the backward.
  DeviceBuffer kept(*this, conv_kept_bytes(g, Storage::fp32_nchw));
  const auto run_nhwc = [&] {
    constexpr Storage fp32 = Storage::fp32_nchw;
    conv2d_forward_nhwc(g, nhwc, fp32, x.f(), w.f(), nullptr, fp32, y.f(), kept.as<void>());
    conv2d_backward_nhwc(g, nhwc, fp32, x.f(), kept.as<void>(), w.f(), fp32, y.f(), dx.f(), dw.f());
    join_side();  // a capture ends with every branch joined
  };
  const auto run_legacy = [&] {
    void* ws = conv_workspace(legacy.workspace_bytes());
    legacy.forward(dnn(), x.f(), w.f(), y.f(), ws);
    legacy.backward_filter(dnn(), x.f(), y.f(), dw.f(), ws);
    legacy.backward_data(dnn(), w.f(), y.f(), dx.f(), ws);
  };
  // Once eagerly: the scratch and workspace grow outside the capture.
  run_nhwc();
  run_legacy();
  float nhwc_us = std::numeric_limits<float>::infinity(), legacy_us = nhwc_us;
  for (int round = 0; round < kTimingRounds; ++round) {  // each one's best, as fastest()'s
    nhwc_us = std::min(nhwc_us, graph_us(stream(), run_nhwc));
    legacy_us = std::min(legacy_us, graph_us(stream(), run_legacy));
  }
  const bool faster = nhwc_us <= legacy_us;
  const char* name = is_bf16(nhwc.storage()) ? "bf16" : "nhwc";
  if (std::getenv("SWEEP_CUDNN_LOG"))
    std::fprintf(stderr,
                 "sweep: conv n%d c%d %dx%d k%d %dx%d s%d: %s %.1f us, legacy %.1f us in a graph "
                 "(fwd + both backward): %s\n",
                 g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.stride_h, name, double(nhwc_us),
                 double(legacy_us), faster ? name : "legacy");
  keep_choice(device_, "nhwc_conv_faster", choice_key(key), {faster ? 1.0 : 0.0});
  return faster;
}

bool CudaBackend::our_nhwc_filter_faster(const ConvGeom& g, const NhwcConvPlan& nhwc) {
  static std::mutex mutex;
  const ChoiceKey key{device_,    g.n,        g.c,     g.h,     g.w,     g.k,     g.r, g.s,
                      g.stride_h, g.stride_w, g.pad_h, g.pad_w, g.out_h, g.out_w, 0};
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto kept = kept_choice(device_, "nhwc_filter_ours", choice_key(key));
      kept && kept->size() == 1)
    return (*kept)[0] != 0;
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.k * g.out_h * g.out_w,
                    nw = std::size_t(g.k) * g.c * g.r * g.s;
  DeviceBuffer x(*this, nx * sizeof(float)), y(*this, ny * sizeof(float)),
      dw(*this, nw * sizeof(float)), partials(*this, nhwc_wgrad_scratch_floats(g) * sizeof(float));
  fill(x.f(), nx, 0.f);
  fill(y.f(), ny, 0.f);
  const auto run_plan = [&] {
    nhwc.backward_filter(dnn(), x.f(), y.f(), dw.f(), conv_workspace(nhwc.workspace_bytes()));
  };
  const auto run_ours = [&] { nhwc_wgrad(g, x.f(), y.f(), dw.f(), partials.f(), stream()); };
  // Once eagerly: the workspace grows outside the capture.
  run_plan();
  run_ours();
  float plan_us = std::numeric_limits<float>::infinity(), ours_us = plan_us;
  for (int round = 0; round < kTimingRounds; ++round) {  // each one's best, as fastest()'s
    plan_us = std::min(plan_us, graph_us(stream(), run_plan));
    ours_us = std::min(ours_us, graph_us(stream(), run_ours));
  }
  const bool faster = ours_us < plan_us;
  if (std::getenv("SWEEP_CUDNN_LOG"))
    std::fprintf(stderr,
                 "sweep: conv n%d c%d %dx%d k%d %dx%d s%d nhwc weight gradient: ours %.1f us, "
                 "cuDNN's %.1f us in a graph: %s\n",
                 g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.stride_h, double(ours_us), double(plan_us),
                 faster ? "ours" : "cuDNN's");
  keep_choice(device_, "nhwc_filter_ours", choice_key(key), {faster ? 1.0 : 0.0});
  return faster;
}

}  // namespace sweep::trainer::cuda
