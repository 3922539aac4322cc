/*
 * loss.cuh — softmax cross-entropy (loss, dlogits and batch statistics in one launch), argmax, and
 * the mean squared error of regression (likewise one launch).
 *
 * The loss kernel is ONE block: warp w handles samples w, w + warps, ..., each lane a strided
 * part of the row; per-warp totals are added in warp order by thread 0, which then adds them to
 * the device-side double stats. A fixed order means the statistics are bitwise reproducible, and
 * one block is plenty: a batch is at most a few thousand rows of a few hundred classes. Like the
 * CPU backend it works around each row's maximum in double precision. A label outside
 * [0, classes) makes that sample's loss NaN (the run then ends as diverged) instead of reading
 * out of bounds; the CPU backend, which can check before starting, throws instead.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

// ------------------------------------------------------------------------------- kernels

// The first maximum of a row, reduced across a warp: larger value wins, equal values keep the
// lower index, exactly the CPU's left-to-right scan.
__device__ __forceinline__ void warp_first_max(float& value, int& index) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, value, offset);
    const int i = __shfl_xor_sync(0xffffffffu, index, offset);
    if (v > value || (v == value && i < index)) {
      value = v;
      index = i;
    }
  }
}

__device__ __forceinline__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__global__ void softmax_xent_kernel(const float* logits /* (n, classes) */,
                                    const std::int32_t* labels /* (n) */, int n, int classes,
                                    float* dlogits /* (n, classes) or null */,
                                    double* stats /* (2): loss sum, correct */,
                                    int mean_over /* the batch the mean is over (>= n) */,
                                    const StepScalars* dyn /* (1) or null */) {
  if (dyn) labels += dyn->label_delta;
  __shared__ double warp_loss[32], warp_correct[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const float inv_n = 1.f / static_cast<float>(mean_over);
  double loss_acc = 0, correct_acc = 0;
  for (int i = warp; i < n; i += warps) {
    const float* row = logits + std::size_t(i) * classes;
    float best = -INFINITY;
    int best_index = classes;
    for (int j = lane; j < classes; j += 32) {
      const float v = row[j];
      if (v > best || best_index == classes) {
        best = v;
        best_index = j;
      }
    }
    warp_first_max(best, best_index);
    double sum = 0;
    for (int j = lane; j < classes; j += 32) sum += exp(double(row[j]) - double(best));
    sum = warp_sum(sum);
    const double lse = double(best) + log(sum);
    const int label = labels[i];
    const bool valid = label >= 0 && label < classes;
    if (lane == 0) {
      loss_acc += valid ? lse - double(row[label]) : nan("");
      correct_acc += best_index == label ? 1.0 : 0.0;
    }
    if (dlogits) {
      float* d = dlogits + std::size_t(i) * classes;
      for (int j = lane; j < classes; j += 32) {
        const float pj = __fmul_rn(static_cast<float>(exp(double(row[j]) - lse)), inv_n);
        d[j] = j == label ? __fsub_rn(pj, inv_n) : pj;
      }
    }
  }
  if (lane == 0) {
    warp_loss[warp] = loss_acc;
    warp_correct[warp] = correct_acc;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double loss = 0, correct = 0;
    for (int w = 0; w < warps; ++w) {
      loss += warp_loss[w];
      correct += warp_correct[w];
    }
    stats[0] += loss;
    stats[1] += correct;
  }
}

// Mean squared error of one output per sample: one block, each thread a strided part of the
// batch, the per-thread sums added in thread order by thread 0 (reproducible). The error and its
// gradient in float with the CPU's two roundings (pred - target, then 2 e / mean_over).
__global__ void mse_kernel(const float* pred /* (n) */, const float* targets /* (n) */, int n,
                           float* dpred /* (n) or null */, double* stats /* (2): SSE, SAE */,
                           int mean_over, const StepScalars* dyn /* (1) or null */) {
  if (dyn) targets += dyn->label_delta;
  __shared__ double part_sq[256], part_abs[256];  // blockDim.x <= 256
  const float inv_n = 1.f / static_cast<float>(mean_over);
  double sq = 0, ab = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float e = __fsub_rn(pred[i], targets[i]);
    if (dpred) dpred[i] = __fmul_rn(__fmul_rn(2.f, e), inv_n);
    sq += double(e) * double(e);
    ab += fabs(double(e));
  }
  part_sq[threadIdx.x] = sq;
  part_abs[threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total_sq = 0, total_abs = 0;
    for (int t = 0; t < static_cast<int>(blockDim.x); ++t) {
      total_sq += part_sq[t];
      total_abs += part_abs[t];
    }
    stats[0] += total_sq;
    stats[1] += total_abs;
  }
}

__global__ void argmax_kernel(const float* logits /* (n, classes) */, int n, int classes,
                              std::int32_t* pred /* (n) */,
                              const StepScalars* dyn /* (1) or null */) {
  if (dyn) pred += dyn->label_delta;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* row = logits + std::size_t(i) * classes;
  int best = 0;
  for (int j = 1; j < classes; ++j)
    if (row[j] > row[best]) best = j;
  pred[i] = best;
}

// ----------------------------------------------------------------------------- launchers

inline void softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n,
                                  int classes, float* dlogits, double* stats, int mean_over,
                                  const StepScalars* dyn, cudaStream_t s) {
  if (n <= 0) return;
  const int threads = n >= 32 ? 1024 : 32 * n;
  softmax_xent_kernel<<<1, threads, 0, s>>>(logits, labels, n, classes, dlogits, stats, mean_over,
                                            dyn);
  SWEEP_CHECK_LAUNCH();
}

inline void mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                               double* stats, int mean_over, const StepScalars* dyn,
                               cudaStream_t s) {
  if (n <= 0) return;
  const int threads = n >= 256 ? 256 : 32 * ((n + 31) / 32);
  mse_kernel<<<1, threads, 0, s>>>(pred, targets, n, dpred, stats, mean_over, dyn);
  SWEEP_CHECK_LAUNCH();
}

inline void argmax(const float* logits, int n, int classes, std::int32_t* pred,
                   const StepScalars* dyn, cudaStream_t s) {
  if (n <= 0) return;
  argmax_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, s>>>(logits, n, classes, pred, dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
