/*
 * cuda_layers.cu — dense (cuBLAS), convolution, pooling and batch norm (cuDNN plans), and the
 * elementwise ops of the CUDA backend.
 *
 * cuBLAS is column-major and our tensors row-major: a row-major (r, c) matrix is a column-major
 * (c, r) one, its transpose. So y (n, out) = x (n, in) w (out, in)^T is computed as the
 * column-major product y^T (out, n) = w (out, in) x^T (in, n), that is sgemm(T, N, out, n, in,
 * w [ld in], x [ld in], y [ld out]); the backward products read the same way (see each call).
 * Biases are added by our own kernels after the product (one launch) rather than cuBLASLt
 * epilogues, which would need a second handle type for one saved launch per layer.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/batchnorm.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/elementwise.cuh"
#include "trainer/cuda/maxpool2x2.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_cast.cuh"
#include "trainer/cuda/nhwc_wgrad.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/skinny_dense.cuh"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::cuda {

namespace {
const float kOne = 1.f, kZero = 0.f;

// A classifier head (few outputs, modest input): our own kernels beat cuBLAS' launches there.
bool skinny(int n, int in, int out) {
  return out <= kSkinnyMaxOut && std::size_t(n) * in <= (std::size_t{1} << 22);
}

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

// Offsets (in elements) of consecutive arrays in one channels-last scratch: each starts on a
// 256-byte boundary (bf16; 512 for fp32).
constexpr std::size_t kNhwcAlign = 128;
std::size_t padded(std::size_t n) { return (n + kNhwcAlign - 1) / kNhwcAlign * kNhwcAlign; }

}  // namespace

// ------------------------------------------------------------------------------ elementwise

void CudaBackend::fill(float* x, std::size_t n, float value) {
  enter();
  cuda::fill(x, n, value, stream());
}

void CudaBackend::relu_forward(const float* x, float* y, std::size_t n) {
  enter();
  cuda::relu_forward(x, y, n, stream());
}

void CudaBackend::relu_backward(const float* y, const float* dy, float* dx, std::size_t n) {
  enter_backward({floats(y, n), floats(dy, n)}, {floats(dx, n)});
  cuda::relu_backward(y, dy, dx, n, stream());
}

void CudaBackend::dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                                  std::uint64_t seed, std::uint64_t counter) {
  enter();
  if (capturing_)
    throw Error(
        "cuda: dropout cannot be captured in a CUDA graph yet (its counter changes every "
        "step); run this model's steps eagerly");
  cuda::dropout(x, y, mask, n, p, seed, counter, stream());
}

void CudaBackend::mul(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::mul(a, b, y, n, stream());
}

void CudaBackend::add(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::add(a, b, y, n, stream());
}

void CudaBackend::add_relu(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::add_relu(a, b, y, n, stream());
}

// ------------------------------------------------------------------------------------ dense

void CudaBackend::dense_forward(const float* x, const float* w, const float* b, float* y, int n,
                                int in, int out) {
  dense_forward_into(x, w, b, y, n, in, out, false);
}

void CudaBackend::dense_forward_relu(const float* x, const float* w, const float* b, float* y,
                                     int n, int in, int out) {
  dense_forward_into(x, w, b, y, n, in, out, true);
}

// The product, then the bias and the ReLU (when wanted) in one launch, or all of it in one.
void CudaBackend::dense_forward_into(const float* x, const float* w, const float* b, float* y,
                                     int n, int in, int out, bool relu) {
  enter();
  // A classifier head (skinny) runs our fp32 kernels in every mode: in bf16 its conversions and
  // cuBLAS launches cost more than its products (LeNet's 500 -> 10), and fp32 is the more exact.
  if (skinny(n, in, out)) {
    skinny_dense_forward(x, w, b, y, n, in, out, relu, shares_device(), stream());
    return;  // bias and ReLU included
  }
  if (math_ == MathMode::bf16) {
    const std::size_t nx = std::size_t(n) * in, nw = std::size_t(out) * in;
    auto* xb = static_cast<__nv_bfloat16*>(
        nhwc_scratch((padded(nx) + padded(nw)) * sizeof(__nv_bfloat16)));
    __nv_bfloat16* wb = xb + padded(nx);
    to_nhwc<__nv_bfloat16>({{x, xb, n, in}, {w, wb, out, in}}, stream());
    gemm_bf16(CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, wb, in, xb, in, y, out);
  } else {
    // column-major: y^T (out, n) = [w as (in, out)]^T (out, in) * [x as (in, n)]
    SWEEP_CHECK_CUBLAS(cublasSgemm(cublas_.get(), CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &kOne, w,
                                   in, x, in, &kZero, y, out));
  }
  if (relu)
    add_row_bias_relu(y, b, n, out, stream());
  else if (b)
    add_row_bias(y, b, n, out, stream());
}

void CudaBackend::dense_backward(const float* x, const float* w, const float* dy, float* dx,
                                 float* dw, float* db, int n, int in, int out) {
  dense_backward_from(x, w, dy, dx, dw, db, n, in, out, false);
}

void CudaBackend::dense_backward_relu_input(const float* x, const float* w, const float* dy,
                                            float* dx, float* dw, float* db, int n, int in,
                                            int out) {
  // Our skinny kernels fold the ReLU into dx's own pass; elsewhere it is relu_backward after.
  if (skinny(n, in, out) && dx) return dense_backward_from(x, w, dy, dx, dw, db, n, in, out, true);
  dense_backward_from(x, w, dy, dx, dw, db, n, in, out, false);
  if (dx) relu_backward(x, dx, dx, std::size_t(n) * std::size_t(in));
}

// relu_input: skinny only (the caller checks).
void CudaBackend::dense_backward_from(const float* x, const float* w, const float* dy, float* dx,
                                      float* dw, float* db, int n, int in, int out,
                                      bool relu_input) {
  const std::size_t nx = std::size_t(n) * in, ny = std::size_t(n) * out, nw = std::size_t(out) * in;
  enter_backward({floats(x, nx), floats(w, nw), floats(dy, ny)},
                 {floats(dx, nx), floats(dw, nw), floats(db, std::size_t(out))});
  if (math_ == MathMode::bf16 && !skinny(n, in, out)) {
    const std::size_t nwd = dx ? nw : 0;
    auto* xb = static_cast<__nv_bfloat16*>(
        nhwc_scratch((padded(nx) + padded(ny) + padded(nwd)) * sizeof(__nv_bfloat16)));
    __nv_bfloat16 *dyb = xb + padded(nx), *wb = dyb + padded(ny);
    to_nhwc<__nv_bfloat16>({{x, xb, n, in}, {dy, dyb, n, out}, {w, wb, dx ? out : 0, in}},
                           stream());
    if (dx) gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, wb, in, dyb, out, dx, in);
    gemm_bf16(CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, xb, in, dyb, out, dw, in);
    if (db) column_sums(dy, db, n, out, stream());
    return;
  }
  // The weight side (and the bias gradient) first, on the side stream when there is a data
  // gradient to run beside it.
  Side* side = side_for(dx != nullptr);
  if (side)
    fork_side(*side, {floats(x, nx), floats(dy, ny)},
              {floats(dw, nw), floats(db, std::size_t(out))});
  cudaStream_t ws = side ? side->stream.get() : stream();
  if (skinny(n, in, out)) {
    skinny_dense_dw(x, dy, dw, db, n, in, out, ws);  // the bias gradient included
    if (dx) skinny_dense_dx(w, dy, relu_input ? x : nullptr, dx, n, in, out, stream());
    return;
  }
  // dw (out, in) = dy^T (out, n) x (n, in); column-major: dw^T (in, out) = [x as (in, n)] *
  // [dy as (out, n)]^T
  SWEEP_CHECK_CUBLAS(cublasSgemm(side ? side->cublas.get() : cublas_.get(), CUBLAS_OP_N,
                                 CUBLAS_OP_T, in, out, n, &kOne, x, in, dy, out, &kZero, dw, in));
  if (db) column_sums(dy, db, n, out, ws);
  if (dx) {
    // dx (n, in) = dy (n, out) w (out, in); column-major: dx^T (in, n) = [w as (in, out)] *
    // [dy as (out, n)]
    SWEEP_CHECK_CUBLAS(cublasSgemm(cublas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, &kOne, w,
                                   in, dy, out, &kZero, dx, in));
  }
}

// bf16 operands, fp32 accumulation and fp32 result (cuBLAS' FAST_16BF compute mode on fp32 data
// was measured to leave small products in fp32, so the operands are narrowed here, explicitly).
void CudaBackend::gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* a, int lda, const void* b, int ldb, float* c, int ldc) {
  SWEEP_CHECK_CUBLAS(cublasGemmEx(cublas_.get(), ta, tb, m, n, k, &kOne, a, CUDA_R_16BF, lda, b,
                                  CUDA_R_16BF, ldb, &kZero, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
}

// ------------------------------------------------------------------------------ convolution

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
// (LeNet's weight gradients at batch 64: 14-27x slower than fp32, measured). So each timed shape
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
    // result then goes to the side's own scratch. At 32 channels of 32x32 cuDNN's fastest tf32
    // weight gradient fills a fifth of an H200 for 200 us, which the data side uses meanwhile.
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

void* CudaBackend::nhwc_scratch(std::size_t bytes) {
  return grow(nhwc_scratch_, bytes, "channels-last scratch");
}

float* CudaBackend::scratch_floats(DeviceMemory& m, std::size_t n) {
  return static_cast<float*>(grow(m, n * sizeof(float), "scratch"));
}

// ---------------------------------------------------------------------------------- pooling

const PoolPlan& CudaBackend::pool_plan(const PoolGeom& g, PoolMode mode) {
  const std::array<int, 13> key{g.n,
                                g.c,
                                g.h,
                                g.w,
                                g.kh,
                                g.kw,
                                g.stride_h,
                                g.stride_w,
                                g.pad_h,
                                g.pad_w,
                                g.out_h,
                                g.out_w,
                                static_cast<int>(mode)};
  auto it = pool_plans_.find(key);
  if (it == pool_plans_.end()) {
    require_not_capturing("building a pooling plan");
    it = pool_plans_.emplace(key, std::make_unique<PoolPlan>(g, mode)).first;
  }
  return *it->second;
}

void CudaBackend::pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) {
  enter();
  if (mode == PoolMode::max && is_2x2_stride2(g))
    return maxpool2x2_forward(x, y, nullptr, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                              shares_device(), stream());
  pool_plan(g, mode).forward(dnn(), x, y);
}

void CudaBackend::pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                                const float* dy, float* dx) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({floats(x, nx), floats(y, ny), floats(dy, ny)}, {floats(dx, nx)});
  if (mode == PoolMode::max && is_2x2_stride2(g))
    return maxpool2x2_backward(x, y, dy, dx, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                               shares_device(), stream());
  pool_plan(g, mode).backward(dnn(), x, y, dy, dx);
}

void CudaBackend::maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                            std::uint8_t* argmax) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_forward_argmax on another pooling");
  enter();
  maxpool2x2_forward(x, y, argmax, std::size_t(g.n) * g.c, g.h, g.w, g.out_h, g.out_w,
                     shares_device(), stream());
}

// Our tiled forward pools its outputs in shared memory where it runs the shape and the pooled
// blocks fit (tiled_conv_pool_fits); otherwise the convolution and then the pooling.
void CudaBackend::conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                            const float* b, float* y, float* pooled,
                                            std::uint8_t* argmax) {
  enter();
  const ConvEntry& e = conv_entry(g);
  if (!e.nhwc && e.forward == ConvImpl::tiled && tiled_conv_pool_fits(g, e.forward_sms))
    return tiled_conv_forward_maxpool2x2(g, x, w, b, pooled, argmax, e.forward_sms, stream());
  conv2d_forward(g, x, w, b, y);
  maxpool2x2_forward_argmax(maxpool2x2_of(g), y, pooled, argmax);
}

void CudaBackend::maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax,
                                             const float* dy, float* dx) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_backward_argmax on another pooling");
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                    ny = std::size_t(g.n) * g.c * g.out_h * g.out_w;
  enter_backward({MemoryRange{argmax, ny}, floats(dy, ny)}, {floats(dx, nx)});
  cuda::maxpool2x2_backward_argmax(argmax, dy, dx, std::size_t(g.n) * g.c, g.h, g.w, g.out_h,
                                   g.out_w, shares_device(), stream());
}

// ------------------------------------------------------------------------------- batch norm

void CudaBackend::batchnorm_forward_train(const BatchNormGeom& g, const float* x,
                                          const float* gamma, const float* beta,
                                          float* running_mean, float* running_var, float* save_mean,
                                          float* save_invstd, float* y) {
  enter();
  batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y, false,
                  scratch_floats(batchnorm_scratch_floats(g)), stream());
}

void CudaBackend::batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x,
                                               const float* gamma, const float* beta,
                                               float* running_mean, float* running_var,
                                               float* save_mean, float* save_invstd, float* y) {
  enter();
  batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y, true,
                  scratch_floats(batchnorm_scratch_floats(g)), stream());
}

void CudaBackend::batchnorm_forward_infer(const BatchNormGeom& g, const float* x,
                                          const float* gamma, const float* beta,
                                          const float* running_mean, const float* running_var,
                                          float* y) {
  enter();
  batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, false, stream());
}

void CudaBackend::batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x,
                                               const float* gamma, const float* beta,
                                               const float* running_mean, const float* running_var,
                                               float* y) {
  enter();
  batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, true, stream());
}

void CudaBackend::batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                                     const float* gamma, const float* save_mean,
                                     const float* save_invstd, float* dx, float* dgamma,
                                     float* dbeta) {
  batchnorm_backward_relu(g, x, nullptr, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
}

// y null: no ReLU (batchnorm_backward).
void CudaBackend::batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                                          const float* dy, const float* gamma,
                                          const float* save_mean, const float* save_invstd,
                                          float* dx, float* dgamma, float* dbeta) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.hw, c = std::size_t(g.c);
  enter_backward({floats(x, nx), floats(y, nx), floats(dy, nx), floats(gamma, c),
                  floats(save_mean, c), floats(save_invstd, c)},
                 {floats(dx, nx), floats(dgamma, c), floats(dbeta, c)});
  batchnorm_grad(g, x, y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                 scratch_floats(batchnorm_scratch_floats(g)), stream());
}

}  // namespace sweep::trainer::cuda
