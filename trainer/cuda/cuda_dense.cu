/*
 * cuda_dense.cu — the CUDA backend's dense layer: cuBLAS products (fp32, tf32 or bf16 operands) or
 * our skinny kernels for a classifier head (skinny_dense.cuh), the bias and ReLU in our launches.
 *
 * cuBLAS is column-major and our tensors row-major: a row-major (r, c) matrix is a column-major
 * (c, r) one, its transpose. So y (n, out) = x (n, in) w (out, in)^T is computed as the
 * column-major product y^T (out, n) = w (out, in) x^T (in, n), that is sgemm(T, N, out, n, in,
 * w [ld in], x [ld in], y [ld out]); the backward products read the same way (see each call).
 * Biases are added by our own kernels after the product (one launch) rather than cuBLASLt
 * epilogues, which would need a second handle type for one saved launch per layer.
 */
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/elementwise.cuh"
#include "trainer/cuda/nhwc_cast.cuh"
#include "trainer/cuda/nhwc_scratch_layout.h"
#include "trainer/cuda/skinny_dense.cuh"

namespace sweep::trainer::cuda {

namespace {
const float kOne = 1.f, kZero = 0.f;

// A classifier head (few outputs, modest input): our own kernels beat cuBLAS' launches there.
bool skinny(int n, int in, int out) {
  return out <= kSkinnyMaxOut && std::size_t(n) * in <= (std::size_t{1} << 22);
}

}  // namespace

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

// bf16 operands, fp32 accumulation and fp32 result. The operands are narrowed here, explicitly:
// cuBLAS' FAST_16BF compute mode on fp32 data may leave small products in fp32, and bf16 mode
// promises bf16 products everywhere.
void CudaBackend::gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* a, int lda, const void* b, int ldb, float* c, int ldc) {
  SWEEP_CHECK_CUBLAS(cublasGemmEx(cublas_.get(), ta, tb, m, n, k, &kOne, a, CUDA_R_16BF, lda, b,
                                  CUDA_R_16BF, ldb, &kZero, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
}

}  // namespace sweep::trainer::cuda
