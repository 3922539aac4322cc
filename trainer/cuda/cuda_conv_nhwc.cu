/*
 * cuda_conv_nhwc.cu — a convolution on cuDNN's channels-last plan (cudnn_graph.h): operands in
 * bf16 or fp32 NHWC, what arrives fp32 NCHW converted before and after (nhwc_cast.cuh), and the
 * weight gradient on the side stream where it runs beside the data gradient.
 */
#include <cstddef>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/elementwise.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_cast.cuh"
#include "trainer/cuda/nhwc_scratch_layout.h"
#include "trainer/cuda/nhwc_wgrad.h"

namespace sweep::trainer::cuda {

namespace {

// A cuDNN handle moved to another stream for one call, and back (also when the call throws).
class HandleOnStream {
 public:
  HandleOnStream(cudnnHandle_t h, cudaStream_t there, cudaStream_t back) : h_(h), back_(back) {
    SWEEP_CHECK_CUDNN(cudnnSetStream(h_, there));
  }
  ~HandleOnStream() {
    SWEEP_LOG_ON_ERROR(cudnnSetStream(h_, back_) == CUDNN_STATUS_SUCCESS, "cudnnSetStream");
  }
  HandleOnStream(const HandleOnStream&) = delete;
  HandleOnStream& operator=(const HandleOnStream&) = delete;

 private:
  cudnnHandle_t h_;
  cudaStream_t back_;
};

}  // namespace

// Channels-last: convert what is fp32 NCHW of x and w (one launch; w to K,R,S,C), convolve with
// fp32 accumulation on tensor cores, and convert y back to NCHW adding the bias (one launch)
// unless y is kept channels-last (then the bias is a pass of its own).
void CudaBackend::conv2d_forward_nhwc(const ConvGeom& g, const NhwcConvPlan& plan, Storage xs,
                                      const void* x, const float* w, const float* b, Storage ys,
                                      void* y, void* kept) {
  const Storage s = plan.storage();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                      nw = std::size_t(g.k) * g.c * g.r * g.s,
                      ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
    const bool x_ready = xs == s, y_ready = ys == s;
    // Scratch for what is not kept: x and w (inference), y when it is fp32 NCHW.
    const std::size_t scratch_x = kept || x_ready ? 0 : nx, scratch_w = kept ? 0 : nw;
    T* base = static_cast<T*>(nhwc_scratch(
        (padded(scratch_x) + padded(scratch_w) + padded(y_ready ? 0 : ny)) * sizeof(T)));
    T* kept_w = static_cast<T*>(kept);
    T* wb = kept ? kept_w : base + padded(scratch_x);
    T* xb = x_ready ? static_cast<T*>(const_cast<void*>(x)) : kept ? kept_w + padded(nw) : base;
    T* yb = y_ready ? static_cast<T*>(y) : base + padded(scratch_x) + padded(scratch_w);
    to_nhwc<T>({{static_cast<const float*>(x), xb, x_ready ? 0 : g.n, g.c, g.h * g.w},
                {w, wb, g.k, g.c, g.r * g.s}},
               stream());
    plan.forward(dnn(), xb, wb, yb, conv_workspace(plan.workspace_bytes()));
    if (!y_ready)
      to_nchw<T>({{yb, static_cast<float*>(y), g.n, g.k, g.out_h * g.out_w, b}}, stream());
    else if (b)
      add_bias_nhwc(yb, b, std::size_t(g.n) * g.out_h * g.out_w, g.k, stream());
  });
}

// Channels-last: convert what is fp32 NCHW of x and dy (and w when dx is wanted) in one launch,
// both products with fp32 accumulation, then convert dx back to NCHW unless it is kept
// channels-last (and dw, when the plan's weight gradient is K,R,S,C) in one launch; an fp32
// K,C,R,S weight gradient is written in place.
void CudaBackend::conv2d_backward_nhwc(const ConvGeom& g, const NhwcConvPlan& plan, Storage xs,
                                       const void* x, const void* kept, const float* w, Storage ys,
                                       const void* dy, void* dx, float* dw, bool our_filter) {
  const Storage s = plan.storage();
  with_nhwc_type(s, [&](auto tag) {
    using T = decltype(tag);
    const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                      nw = std::size_t(g.k) * g.c * g.r * g.s,
                      ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
    const bool dw_nchw = our_filter || plan.filter_gradient_nchw();
    // x and w as the forward kept them, x as it is stored, or converted again here.
    const bool x_ready = xs == s, convert_x = !x_ready && !kept, dy_ready = ys == s,
               convert_w = dx && !kept;
    // The weight gradient runs on the side stream, beside the data gradient, where what it reads
    // outlives this call (x as stored or kept, dy as stored: not the shared scratch); its K,R,S,C
    // result then goes to the side's own scratch. cuDNN's tf32 weight gradients fill a small part
    // of the GPU for a long time at our shapes, which the data side uses meanwhile.
    Side* side = !convert_x && dy_ready ? side_for(dx != nullptr) : nullptr;
    const std::size_t nxb = convert_x ? nx : 0, nyb = dy_ready ? 0 : ny, nwd = convert_w ? nw : 0,
                      nwb = dw_nchw || side ? 0 : nw, nxd = dx && !x_ready ? nx : 0;
    T* base = static_cast<T*>(nhwc_scratch(
        (padded(nxb) + padded(nyb) + padded(nwd) + padded(nwb) + padded(nxd)) * sizeof(T)));
    const T* kept_w = static_cast<const T*>(kept);
    const T* xb = x_ready ? static_cast<const T*>(x) : convert_x ? base : kept_w + padded(nw);
    T* dyb_scratch = base + padded(nxb);
    const T* dyb = dy_ready ? static_cast<const T*>(dy) : dyb_scratch;
    T *w_scratch = dyb_scratch + padded(nyb), *dwb = w_scratch + padded(nwd),
      *dx_scratch = dwb + padded(nwb);
    const T* wb = kept ? kept_w : w_scratch;
    T* dxb = x_ready ? static_cast<T*>(dx) : dx_scratch;
    const int hw = g.h * g.w, rs = g.r * g.s;
    to_nhwc<T>(
        {{static_cast<const float*>(x), base, convert_x ? g.n : 0, g.c, hw},
         {static_cast<const float*>(dy), dyb_scratch, dy_ready ? 0 : g.n, g.k, g.out_h * g.out_w},
         {w, w_scratch, convert_w ? g.k : 0, g.c, rs}},
        stream());
    if (our_filter) {
      if constexpr (std::is_same_v<T, float>) {
        // Its per-image partials in the scratch of the stream it runs on, grown before the fork.
        float* partials =
            scratch_floats(side ? side->scratch : scratch_, nhwc_wgrad_scratch_floats(g));
        if (side) fork_side(*side, {stored(xb, nx, s), stored(dyb, ny, s)}, {floats(dw, nw)});
        nhwc_wgrad(g, xb, dyb, dw, partials, side ? side->stream.get() : stream());
      }
    } else if (side) {
      // Grown before the fork (growing waits for the GPU).
      void* side_ws = grow(side->conv_workspace, plan.workspace_bytes(), "convolution workspace");
      T* side_dwb = dw_nchw ? nullptr : reinterpret_cast<T*>(scratch_floats(side->scratch, nw));
      fork_side(*side, {stored(xb, nx, s), stored(dyb, ny, s)}, {floats(dw, nw)});
      {
        // The plan is bound to this backend's handle: the handle follows the side stream.
        const HandleOnStream on_side(dnn(), side->stream.get(), stream());
        plan.backward_filter(dnn(), xb, dyb, dw_nchw ? static_cast<void*>(dw) : side_dwb, side_ws);
      }
      if (!dw_nchw) to_nchw<T>({{side_dwb, dw, g.k, g.c, rs}}, side->stream.get());
    } else {
      plan.backward_filter(dnn(), xb, dyb, dw_nchw ? static_cast<void*>(dw) : dwb,
                           conv_workspace(plan.workspace_bytes()));
    }
    if (dx) plan.backward_data(dnn(), wb, dyb, dxb, conv_workspace(plan.workspace_bytes()));
    to_nchw<T>({{dwb, dw, dw_nchw || side ? 0 : g.k, g.c, rs},
                {dx_scratch, static_cast<float*>(dx), nxd ? g.n : 0, g.c, hw}},
               stream());
  });
}

}  // namespace sweep::trainer::cuda
