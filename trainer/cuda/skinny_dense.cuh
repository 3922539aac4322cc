/*
 * skinny_dense.cuh — dense layers with few outputs (a classifier head: 10 classes), forward and
 * backward, in fp32, as our own kernels instead of cuBLAS.
 *
 * Why: for y (64, 10) = x (64, 500) w^T cuBLAS picks a split-K product plus a reduction kernel,
 * then the bias is a third launch; backward is five launches (two products, one split-K
 * reduction, the bias column sums). LeNet's step is launch-bound, and these products are tiny
 * (0.3 MFLOP). Here: forward is one launch (a warp per output value, bias included; for a step
 * that shares the GPU, a warp per row for all its outputs: a tenth of the warps, x read once, the
 * same sums in the same order); backward is two: dx (a thread per input-gradient value, a sum
 * over at most kSkinnyMaxOut outputs) and dw with db (a thread per weight-gradient value, a sum
 * over the batch; the extra column i == in sums dy for db). Every value is one thread's or one
 * warp's fixed-order sum: reproducible, and the same bits whichever forward kernel ran. Heads of
 * kUnrolledOut outputs get kernels whose loops over the outputs are unrolled.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

constexpr int kSkinnyMaxOut = 32;

// y (n, out) = x (n, in) w (out, in)^T + b (out; may be null), then max(0, y) when relu: one warp
// per y value.
__global__ void skinny_dense_forward_kernel(const float* x, const float* w, const float* b,
                                            float* y, int n, int in, int out, bool relu) {
  const std::size_t warp = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= std::size_t(n) * out) return;
  const int r = static_cast<int>(warp / out), o = static_cast<int>(warp % out);
  const float* xr = x + std::size_t(r) * in;
  const float* wo = w + std::size_t(o) * in;
  float sum = 0.f;
  for (int i = lane; i < in; i += 32) sum = fmaf(xr[i], wo[i], sum);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0) {
    const float v = b ? sum + b[o] : sum;
    y[warp] = relu && v <= 0.f ? 0.f : v;  // as relu_forward: a NaN stays NaN
  }
}

// y as skinny_dense_forward_kernel, one warp per row of x for all OUT outputs: x's row is read
// once instead of OUT times, and a tenth of the warps (LeNet's head) hold an SM. Each output's sum
// runs in the same order as there (lane-strided, then the same shuffle tree): the same bits.
template <int OUT>
__global__ void skinny_dense_forward_rows_kernel(const float* __restrict__ x,
                                                 const float* __restrict__ w,
                                                 const float* __restrict__ b, float* __restrict__ y,
                                                 int n, int in, bool relu) {
  const std::size_t row = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= std::size_t(n)) return;
  const float* xr = x + row * in;
  float sum[OUT];
#pragma unroll
  for (int o = 0; o < OUT; ++o) sum[o] = 0.f;
#pragma unroll 2
  for (int i = lane; i < in; i += 32) {
    const float xv = __ldg(xr + i);
#pragma unroll
    for (int o = 0; o < OUT; ++o) sum[o] = fmaf(xv, __ldg(w + std::size_t(o) * in + i), sum[o]);
  }
#pragma unroll
  for (int o = 0; o < OUT; ++o)
    for (int offset = 16; offset > 0; offset /= 2)
      sum[o] += __shfl_down_sync(0xffffffffu, sum[o], offset);
  if (lane == 0) {
#pragma unroll
    for (int o = 0; o < OUT; ++o) {
      const float v = b ? sum[o] + b[o] : sum[o];
      y[row * OUT + o] = relu && v <= 0.f ? 0.f : v;
    }
  }
}

// dx (n, in) = dy (n, out) w (out, in): one thread per dx value. relu_x (x, when not null): the
// layer's input is a ReLU's output and dx goes on through it, dx = relu_x > 0 ? dx : 0. kOut: the
// outputs when known at compile time (the loop unrolled, every load of a thread issued at once),
// 0 when given by `out`. The same order of sums either way.
template <int kOut>
__global__ void skinny_dense_dx_kernel(const float* __restrict__ dy, const float* __restrict__ w,
                                       const float* __restrict__ relu_x, float* __restrict__ dx,
                                       int n, int in, int out) {
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (t >= std::size_t(n) * in) return;
  const int outs = kOut > 0 ? kOut : out;
  const int r = static_cast<int>(t / in), i = static_cast<int>(t % in);
  const float* dyr = dy + std::size_t(r) * outs;
  float sum = 0.f;
#pragma unroll
  for (int o = 0; o < outs; ++o)
    sum = fmaf(__ldg(dyr + o), __ldg(w + std::size_t(o) * in + i), sum);
  dx[t] = relu_x && !(relu_x[t] > 0.f) ? 0.f : sum;
}

// dw (out, in) = dy^T (out, n) x (n, in), and db (out) = column sums of dy when db is not null:
// one thread per (o, i) for i <= in, the thread of i == in computing db[o].
__global__ void skinny_dense_dw_kernel(const float* dy, const float* x, float* dw, float* db, int n,
                                       int in, int out) {
  const int cols = in + 1;
  const std::size_t t = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (t >= std::size_t(out) * cols) return;
  const int o = static_cast<int>(t / cols), i = static_cast<int>(t % cols);
  float sum = 0.f;
  if (i < in) {
    for (int r = 0; r < n; ++r)
      sum = fmaf(dy[std::size_t(r) * out + o], x[std::size_t(r) * in + i], sum);
    dw[std::size_t(o) * in + i] = sum;
  } else if (db) {
    for (int r = 0; r < n; ++r) sum += dy[std::size_t(r) * out + o];
    db[o] = sum;
  }
}

inline unsigned blocks_for(std::size_t threads) {
  return static_cast<unsigned>((threads + kThreads - 1) / kThreads);
}

// The classifier heads of 10 classes (Fashion-MNIST, CIFAR-10) get the kernels whose loops over the
// outputs are unrolled; other widths the general ones.
constexpr int kUnrolledOut = 10;

// rows: a warp per row for every output (skinny_dense_forward_rows_kernel: a step sharing the GPU
// leaves the other steps nine tenths of the warps), else a warp per output value (alone: the
// shortest time).
inline void skinny_dense_forward(const float* x, const float* w, const float* b, float* y, int n,
                                 int in, int out, bool relu, bool rows, cudaStream_t s) {
  if (rows && out == kUnrolledOut)
    skinny_dense_forward_rows_kernel<kUnrolledOut>
        <<<blocks_for(std::size_t(n) * 32), kThreads, 0, s>>>(x, w, b, y, n, in, relu);
  else
    skinny_dense_forward_kernel<<<blocks_for(std::size_t(n) * out * 32), kThreads, 0, s>>>(
        x, w, b, y, n, in, out, relu);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

// Backward in two launches, which the backend may put on two streams: the data gradient
// (relu_x: see skinny_dense_dx_kernel; may be null) and the weight gradient with the bias
// gradient (db may be null: no bias).
inline void skinny_dense_dx(const float* w, const float* dy, const float* relu_x, float* dx, int n,
                            int in, int out, cudaStream_t s) {
  if (out == kUnrolledOut)
    skinny_dense_dx_kernel<kUnrolledOut>
        <<<blocks_for(std::size_t(n) * in), kThreads, 0, s>>>(dy, w, relu_x, dx, n, in, out);
  else
    skinny_dense_dx_kernel<0>
        <<<blocks_for(std::size_t(n) * in), kThreads, 0, s>>>(dy, w, relu_x, dx, n, in, out);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}
inline void skinny_dense_dw(const float* x, const float* dy, float* dw, float* db, int n, int in,
                            int out, cudaStream_t s) {
  skinny_dense_dw_kernel<<<blocks_for(std::size_t(out) * (in + 1)), kThreads, 0, s>>>(dy, x, dw, db,
                                                                                      n, in, out);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

}  // namespace sweep::trainer::cuda
