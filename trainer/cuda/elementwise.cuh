/*
 * elementwise.cuh — fill, relu, dropout, multiply, add, bias adds and the bias-gradient sums.
 *
 * Kernels take raw pointers with their shapes written beside them; launchers take sizes and the
 * stream and check the launch. Dropout computes y = x * mask with __fmul_rn so the compiler can't
 * fuse it differently from the CPU backend: masks and outputs match the CPU bit for bit. The bias
 * gradients are plain loops with one thread per output (per column for dense, a block per channel
 * for conv): fixed summation order, so they are reproducible.
 */
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/rng.h"

namespace sweep::trainer::cuda {

// ------------------------------------------------------------------------------- kernels
// Defined once, in elementwise_kernels.cu: several of the backend's .cu files launch them.

__global__ void fill_kernel(float* x /* (n) */, std::size_t n, float value);
__global__ void relu_forward_kernel(const float* x /* (n) */, float* y /* (n) */, std::size_t n);
__global__ void relu_backward_kernel(const float* y /* (n) */, const float* dy /* (n) */,
                                     float* dx /* (n) */, std::size_t n);
__global__ void dropout_kernel(const float* x /* (n) */, float* y /* (n) */, float* mask /* (n) */,
                               std::size_t n, float p, float keep_scale, std::uint64_t seed,
                               std::uint64_t counter);
__global__ void mul_kernel(const float* a /* (n) */, const float* b /* (n) */, float* y /* (n) */,
                           std::size_t n);
// y = a + b; y may alias a or b (each thread reads its element before writing it). __fadd_rn, so
// no contraction can make it differ from the CPU backend's sum.
__global__ void add_kernel(const float* a /* (n) */, const float* b /* (n) */, float* y /* (n) */,
                           std::size_t n);
// y = max(0, a + b): add_kernel then relu_forward_kernel in one pass (a NaN stays NaN).
__global__ void add_relu_kernel(const float* a /* (n) */, const float* b /* (n) */,
                                float* y /* (n) */, std::size_t n);
// y (rows, cols) += b (cols), row-major.
__global__ void add_row_bias_kernel(float* y, const float* b, std::size_t rows, int cols);
// y (rows, cols) = max(0, y + b (cols; may be null)): a dense layer's bias and the ReLU after it.
__global__ void add_row_bias_relu_kernel(float* y, const float* b, std::size_t rows, int cols);
// y (n, k, plane) += b (k).
__global__ void add_channel_bias_kernel(float* y, const float* b, std::size_t total, int k,
                                        int plane);
// db (cols) = column sums of dy (rows, cols). Block (32, 8): 32 adjacent columns (coalesced),
// 8 row groups; the 8 partial sums are added in row-group order.
__global__ void column_sums_kernel(const float* dy, float* db, int rows, int cols);
// Pass 1 of the conv bias gradient: partial (k, chunks) = sums of dy (n, k, plane) over the
// samples of one chunk and the plane. A grid of k x chunks blocks fills the GPU even when k is
// small (LeNet's first layer has 20 channels and 576 values per plane).
__global__ void channel_partial_sums_kernel(const float* dy, float* partial, int n, int k,
                                            int plane, int per_chunk);
// Pass 2: db (k) = the chunks' partial sums, added in chunk order.
__global__ void channel_total_kernel(const float* partial, float* db, int k, int chunks);

// ----------------------------------------------------------------------------- launchers

inline void fill(float* x, std::size_t n, float value, cudaStream_t s) {
  if (!n) return;
  fill_kernel<<<grid_for(n), kThreads, 0, s>>>(x, n, value);
  SWEEP_CHECK_LAUNCH();
}

inline void relu_forward(const float* x, float* y, std::size_t n, cudaStream_t s) {
  if (!n) return;
  relu_forward_kernel<<<grid_for(n), kThreads, 0, s>>>(x, y, n);
  SWEEP_CHECK_LAUNCH();
}

inline void relu_backward(const float* y, const float* dy, float* dx, std::size_t n,
                          cudaStream_t s) {
  if (!n) return;
  relu_backward_kernel<<<grid_for(n), kThreads, 0, s>>>(y, dy, dx, n);
  SWEEP_CHECK_LAUNCH();
}

inline void dropout(const float* x, float* y, float* mask, std::size_t n, float p,
                    std::uint64_t seed, std::uint64_t counter, cudaStream_t s) {
  if (!n) return;
  const float keep_scale = p < 1.f ? 1.f / (1.f - p) : 0.f;  // the CPU backend's expression
  dropout_kernel<<<grid_for(n), kThreads, 0, s>>>(x, y, mask, n, p, keep_scale, seed, counter);
  SWEEP_CHECK_LAUNCH();
}

inline void mul(const float* a, const float* b, float* y, std::size_t n, cudaStream_t s) {
  if (!n) return;
  mul_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n);
  SWEEP_CHECK_LAUNCH();
}

inline void add(const float* a, const float* b, float* y, std::size_t n, cudaStream_t s) {
  if (!n) return;
  add_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n);
  SWEEP_CHECK_LAUNCH();
}

inline void add_relu(const float* a, const float* b, float* y, std::size_t n, cudaStream_t s) {
  if (!n) return;
  add_relu_kernel<<<grid_for(n), kThreads, 0, s>>>(a, b, y, n);
  SWEEP_CHECK_LAUNCH();
}

inline void add_row_bias(float* y, const float* b, int rows, int cols, cudaStream_t s) {
  const std::size_t n = std::size_t(rows) * cols;
  if (!n) return;
  add_row_bias_kernel<<<grid_for(n), kThreads, 0, s>>>(y, b, rows, cols);
  SWEEP_CHECK_LAUNCH();
}

inline void add_row_bias_relu(float* y, const float* b, int rows, int cols, cudaStream_t s) {
  const std::size_t n = std::size_t(rows) * cols;
  if (!n) return;
  add_row_bias_relu_kernel<<<grid_for(n), kThreads, 0, s>>>(y, b, rows, cols);
  SWEEP_CHECK_LAUNCH();
}

inline void add_channel_bias(float* y, const float* b, int n, int k, int plane, cudaStream_t s) {
  const std::size_t total = std::size_t(n) * k * plane;
  if (!total) return;
  add_channel_bias_kernel<<<grid_for(total), kThreads, 0, s>>>(y, b, total, k, plane);
  SWEEP_CHECK_LAUNCH();
}

inline void column_sums(const float* dy, float* db, int rows, int cols, cudaStream_t s) {
  if (cols <= 0) return;
  column_sums_kernel<<<(cols + 31) / 32, dim3(32, 8), 0, s>>>(dy, db, rows, cols);
  SWEEP_CHECK_LAUNCH();
}

// Chunks of samples for the conv bias gradient: about two blocks per multiprocessor in all.
inline int channel_sum_chunks(int n, int k) {
  return std::max(1, std::min(n, (2 * 132 + k - 1) / std::max(k, 1)));
}

// partial: scratch of k * channel_sum_chunks(n, k) floats.
inline void channel_sums(const float* dy, float* db, int n, int k, int plane, float* partial,
                         cudaStream_t s) {
  if (k <= 0) return;
  const int chunks = channel_sum_chunks(n, k), per_chunk = (n + chunks - 1) / chunks;
  channel_partial_sums_kernel<<<dim3(k, chunks), kThreads, 0, s>>>(dy, partial, n, k, plane,
                                                                   per_chunk);
  SWEEP_CHECK_LAUNCH();
  channel_total_kernel<<<(k + kThreads - 1) / kThreads, kThreads, 0, s>>>(partial, db, k, chunks);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
