/*
 * cuda_conv.cu — the CUDA backend's convolution ops: each shape's plans (conv_entry, built on its
 * first call), the dispatch of each op to the channels-last plan (cuda_conv_nhwc.cu), the fp32 /
 * tf32 plan or our kernels on fp32 NCHW tensors, and the bias gradient's channel sums.
 */
#include <cstddef>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/elementwise.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_cast.cuh"
#include "trainer/cuda/nhwc_scratch_layout.h"
#include "trainer/cuda/nhwc_wgrad.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::cuda {

CudaBackend::ConvKey CudaBackend::conv_key(const ConvGeom& g, int n) {
  return {n,          g.c,     g.h,     g.w,     g.k,     g.r, g.s, g.stride_h,
          g.stride_w, g.pad_h, g.pad_w, g.out_h, g.out_w, 0,   0};
}

const CudaBackend::ConvEntry& CudaBackend::conv_entry(const ConvGeom& g) {
  const ConvKey key = conv_key(g, g.n);
  auto it = conv_plans_.find(key);
  if (it == conv_plans_.end()) {
    require_not_capturing("building a convolution plan");
    join_side();  // cudnnFind and our timings run on the stream, alone
    // Time the algorithms only for the batch size that runs every step (tune_for_batch); never
    // when deterministic: a timing differs run to run, and so would the algorithm it picks.
    const bool timed = !deterministic_ && (tuned_batch_ == 0 || g.n == tuned_batch_);
    ConvEntry e;
    make_conv_plans(g, timed, e);
    choose_direct_conv(g, timed, e);
    it = conv_plans_.emplace(key, std::move(e)).first;
  }
  return it->second;
}

// Channels-last plans (cudnn_graph.h) where they pay. bf16 mode: cuDNN's bf16 kernels are fast for
// wide layers (tensor cores want channels in multiples of 8) and slow or missing for narrow ones
// (LeNet's weight gradients, several times slower than fp32). So each timed shape
// gets a tf32 plan and a bf16 plan, and keeps the bf16 one when its three ops run faster in a CUDA
// graph, conversions included (nhwc_runs_faster); a shape with no bf16 engine runs tf32. tf32 (not
// fp32) because a bf16 user has already accepted reduced-precision products. tf32 mode: a shape
// that reads channels-last activations gets the fp32 NHWC plan, which reaches cuDNN's tf32
// tensor-core engines (for NCHW tensors its fastest at our shapes are fp32 FMA kernels); one that
// only writes them (a network's first convolution, on 1 or 3 channels) keeps the NHWC plan where
// it runs faster, as in bf16. Untimed shapes (a partial batch) and deterministic mode run the
// legacy plan: an engine unseen could be a slow one, and the graph API's fast weight gradients may
// add in any order.
Storage CudaBackend::nhwc_plan_storage(const ConvGeom& g) const {
  if (deterministic_) return Storage::fp32_nchw;
  if (math_ == MathMode::bf16) return Storage::bf16_nhwc;
  if (math_ == MathMode::tf32 && (conv_choice_ == ConvChoice::nhwc_first || conv_writes_nhwc(g)))
    return Storage::fp32_nhwc;
  return Storage::fp32_nchw;
}

void CudaBackend::make_conv_plans(const ConvGeom& g, bool find, ConvEntry& e) {
  const ConvPlan::Choose how = deterministic_ ? ConvPlan::Choose::deterministic_untimed
                               : find         ? ConvPlan::Choose::timed
                                              : ConvPlan::Choose::untimed;
  const MathMode math = math_ == MathMode::bf16 ? MathMode::tf32 : math_;
  const Storage plan_storage = nhwc_plan_storage(g);
  std::unique_ptr<NhwcConvPlan> nhwc;
  if (is_nhwc(plan_storage) && how == ConvPlan::Choose::timed) {
    try {
      nhwc = std::make_unique<NhwcConvPlan>(dnn(), g, plan_storage, workspace_limit_);
    } catch (const Error&) {  // no channels-last engine for this shape
    }
  }
  if (nhwc && std::getenv("SWEEP_CUDNN_LOG"))
    std::fprintf(stderr, "sweep: conv n%d c%d %dx%d k%d %dx%d s%d p%d %s: %s\n", g.n, g.c, g.h, g.w,
                 g.k, g.r, g.s, g.stride_h, g.pad_h, is_bf16(plan_storage) ? "bf16" : "nhwc",
                 nhwc->describe().c_str());
  // A shape that takes channels-last activations would pay conversions on the legacy plan
  // instead: it runs the channels-last plan, and its legacy plan (never called) is cuDNN's
  // heuristic one, not timed.
  const bool nhwc_anyway = conv_choice_ == ConvChoice::nhwc_first || conv_reads_nhwc(g);
  e.plan = std::make_unique<ConvPlan>(dnn(), g, math, workspace_limit_,
                                      nhwc && nhwc_anyway ? ConvPlan::Choose::untimed : how);
  if (nhwc && (nhwc_anyway || nhwc_runs_faster(g, *nhwc, *e.plan))) e.nhwc = std::move(nhwc);
  if (e.nhwc && !is_bf16(e.nhwc->storage()) && nhwc_wgrad_fits(g))
    e.nhwc_our_filter = our_nhwc_filter_faster(g, *e.nhwc);
}

void CudaBackend::conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                                 float* y) {
  conv2d_forward_stored(g, Storage::fp32_nchw, x, w, b, Storage::fp32_nchw, y, nullptr);
}

// Where a shape may run a channels-last plan, its layer keeps the weights' K,R,S,C copy in the
// plan's type, and its input's when the input is fp32 NCHW, from forward to backward: the backward
// converts neither again, whichever plan the shape takes (a legacy-plan shape leaves them unused).
// The weights first, each part padded as nhwc_scratch's arrays.
std::size_t CudaBackend::conv_kept_bytes(const ConvGeom& g, Storage xs) {
  const Storage s = nhwc_plan_storage(g);
  if (!is_nhwc(s)) return 0;
  const std::size_t nw = std::size_t(g.k) * g.c * g.r * g.s,
                    nx = xs == s ? 0 : std::size_t(g.n) * g.c * g.h * g.w;
  return storage_bytes(s, padded(nw) + padded(nx));
}

void CudaBackend::conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x,
                                        const float* w, const float* b, Storage ys, void* y,
                                        void* kept) {
  enter();
  const ConvEntry& e = conv_entry(g);
  if (e.nhwc) return conv2d_forward_nhwc(g, *e.nhwc, xs, x, w, b, ys, y, kept);
  if (!is_nhwc(xs) && !is_nhwc(ys))
    return conv2d_forward_fp32(g, e, static_cast<const float*>(x), w, b, static_cast<float*>(y));
  // A shape without a channels-last plan (a partial batch) on channels-last activations:
  // converted to fp32 NCHW before, back after.
  with_nhwc_type(is_nhwc(xs) ? xs : ys, [&](auto tag) {
    using T = decltype(tag);
    const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                      ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
    float* base = scratch_floats(widened_scratch_, (is_nhwc(xs) ? nx : 0) + (is_nhwc(ys) ? ny : 0));
    const float* xf = static_cast<const float*>(x);
    float* yf = static_cast<float*>(y);
    if (is_nhwc(xs)) {
      to_nchw<T>({{static_cast<const T*>(x), base, g.n, g.c, g.h * g.w}}, stream());
      xf = base;
    }
    if (is_nhwc(ys)) yf = base + (is_nhwc(xs) ? nx : 0);
    conv2d_forward_fp32(g, e, xf, w, b, yf);
    if (is_nhwc(ys)) to_nhwc<T>({{yf, static_cast<T*>(y), g.n, g.k, g.out_h * g.out_w}}, stream());
  });
}

void CudaBackend::conv2d_forward_fp32(const ConvGeom& g, const ConvEntry& e, const float* x,
                                      const float* w, const float* b, float* y) {
  const ConvPlan& plan = *e.plan;
  // Ours add the bias in the same pass.
  if (e.forward == ConvImpl::direct) return direct_conv_forward(g, x, w, b, y, stream());
  if (e.forward == ConvImpl::tiled)
    return tiled_conv_forward(g, x, w, b, y, e.forward_sms, stream());
  plan.forward(dnn(), x, w, y, conv_workspace(plan.workspace_bytes()));
  if (b) add_channel_bias(y, b, g.n, g.k, g.out_h * g.out_w, stream());
}

void CudaBackend::conv2d_backward(const ConvGeom& g, const float* x, const float* w,
                                  const float* dy, float* dx, float* dw, float* db) {
  conv2d_backward_stored(g, Storage::fp32_nchw, x, nullptr, w, Storage::fp32_nchw, dy, dx, dw, db);
}

void CudaBackend::conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x,
                                         const void* kept, const float* w, Storage ys,
                                         const void* dy, void* dx, float* dw, float* db) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.k * g.out_h * g.out_w,
                    nw = std::size_t(g.k) * g.c * g.r * g.s;
  enter_backward({stored(x, nx, xs), floats(w, nw), stored(dy, ny, ys)},
                 {stored(dx, nx, xs), floats(dw, nw), floats(db, std::size_t(g.k))});
  const ConvEntry& e = conv_entry(g);
  if (e.nhwc) {
    conv2d_backward_nhwc(g, *e.nhwc, xs, x, kept, w, ys, dy, dx, dw, e.nhwc_our_filter);
    if (db && is_nhwc(ys)) {
      const std::size_t rows = std::size_t(g.n) * g.out_h * g.out_w;
      float* scratch = scratch_floats(channel_sums_nhwc_scratch_floats(rows, g.k));
      with_nhwc_type(ys, [&](auto tag) {
        using T = decltype(tag);
        channel_sums_nhwc(static_cast<const T*>(dy), db, rows, g.k, scratch, stream());
      });
    } else if (db) {
      channel_sums_into(g, static_cast<const float*>(dy), db, scratch_, stream());
    }
    return;
  }
  if (!is_nhwc(xs) && !is_nhwc(ys))
    return conv2d_backward_fp32(g, e, static_cast<const float*>(x), w,
                                static_cast<const float*>(dy), static_cast<float*>(dx), dw, db);
  // A shape without a channels-last plan on channels-last activations: x, dy converted to fp32
  // NCHW before, dx back after.
  join_side();  // the converted copies share one scratch with the forward's
  with_nhwc_type(is_nhwc(xs) ? xs : ys, [&](auto tag) {
    using T = decltype(tag);
    const std::size_t wx = is_nhwc(xs) ? nx : 0, wy = is_nhwc(ys) ? ny : 0,
                      wd = is_nhwc(xs) && dx ? nx : 0;
    float* base = scratch_floats(widened_scratch_, wx + wy + wd);
    const float* xf = is_nhwc(xs) ? base : static_cast<const float*>(x);
    const float* dyf = is_nhwc(ys) ? base + wx : static_cast<const float*>(dy);
    float* dxf = is_nhwc(xs) ? (dx ? base + wx + wy : nullptr) : static_cast<float*>(dx);
    to_nchw<T>({{static_cast<const T*>(x), base, wx ? g.n : 0, g.c, g.h * g.w},
                {static_cast<const T*>(dy), base + wx, wy ? g.n : 0, g.k, g.out_h * g.out_w}},
               stream());
    conv2d_backward_fp32(g, e, xf, w, dyf, dxf, dw, db);
    if (wd) to_nhwc<T>({{dxf, static_cast<T*>(dx), g.n, g.c, g.h * g.w}}, stream());
  });
}

void CudaBackend::conv2d_backward_fp32(const ConvGeom& g, const ConvEntry& e, const float* x,
                                       const float* w, const float* dy, float* dx, float* dw,
                                       float* db) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.k * g.out_h * g.out_w,
                    nw = std::size_t(g.k) * g.c * g.r * g.s;
  const ConvPlan& plan = *e.plan;
  // The weight side (and the bias gradient) first, on the side stream when there is a data
  // gradient to run beside it; its workspace and scratch are the side's own.
  Side* side = side_for(dx != nullptr);
  cudaStream_t ws = side ? side->stream.get() : stream();
  DeviceMemory& scratch = side ? side->scratch : scratch_;
  void* workspace = nullptr;
  float* filter_scratch = nullptr;
  if (e.filter == ConvImpl::direct)
    filter_scratch = scratch_floats(scratch, direct_conv_filter_scratch(g, e.filter_parts));
  else if (e.filter == ConvImpl::tiled)
    filter_scratch = scratch_floats(scratch, tiled_conv_filter_scratch(g, e.filter_sms));
  else
    workspace = side ? grow(side->conv_workspace, plan.workspace_bytes(), "convolution workspace")
                     : conv_workspace(plan.workspace_bytes());
  if (db && e.filter == ConvImpl::cudnn) channel_sums_reserve(g, scratch);
  if (side)
    fork_side(*side, {floats(x, nx), floats(dy, ny)},
              {floats(dw, nw), floats(db, std::size_t(g.k))});
  if (e.filter == ConvImpl::direct) {
    direct_conv_backward_filter(g, x, dy, dw, db, e.filter_parts, filter_scratch, ws);
  } else if (e.filter == ConvImpl::tiled) {
    tiled_conv_backward_filter(g, x, dy, dw, db, e.filter_sms, filter_scratch, ws);
  } else {
    plan.backward_filter(side ? side->cudnn.get() : dnn(), x, dy, dw, workspace);
    // Ours sum the bias gradient in the same pass; after cuDNN's it is a launch of its own.
    if (db) channel_sums_into(g, dy, db, scratch, ws);
  }
  if (dx && e.data == ConvImpl::direct)
    direct_conv_backward_data(g, w, dy, dx, stream());
  else if (dx && e.data == ConvImpl::tiled)
    tiled_conv_backward_data(g, w, dy, dx, e.data_sms, stream());
  else if (dx && e.data == ConvImpl::scatter)
    scatter_dgrad(g, w, dy, dx, e.data_sms, stream());
  else if (dx)
    plan.backward_data(dnn(), w, dy, dx, conv_workspace(plan.workspace_bytes()));
}

// The bias gradient: per-channel sums of dy, through partial sums in `scratch` (grown first by
// channel_sums_reserve, outside any fork, since growing waits for the GPU).
void CudaBackend::channel_sums_reserve(const ConvGeom& g, DeviceMemory& scratch) {
  scratch_floats(scratch, std::size_t(g.k) * channel_sum_chunks(g.n, g.k));
}

void CudaBackend::channel_sums_into(const ConvGeom& g, const float* dy, float* db,
                                    DeviceMemory& scratch, cudaStream_t s) {
  channel_sums_reserve(g, scratch);
  channel_sums(dy, db, g.n, g.k, g.out_h * g.out_w, scratch.as<float>(), s);
}

}  // namespace sweep::trainer::cuda
