/*
 * optim.cuh — global gradient norm, clipping scale and the fused optimizer update.
 *
 * The update is ONE launch over the network's flat parameter array (all parameters share one
 * allocation), whatever the number of layers. Its per-step scalars (learning rate, Adam's bias
 * corrections) come either as kernel arguments (eager step) or from a StepScalars block in device
 * memory (captured step, `dyn` not null), so a CUDA graph replays with the current values.
 * sum_squares is two launches, block partials then one block adding them in order, instead of
 * double atomics: the norm, and so clipping, is reproducible run to run.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "trainer/backend.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

// ------------------------------------------------------------------------------- kernels

__global__ void sum_squares_partial_kernel(const float* x /* (n) */, std::size_t n,
                                           double* partial /* (gridDim.x) */) {
  __shared__ double lanes[kThreads];
  double acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double v = x[i];
    acc += v * v;
  }
  lanes[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (int(threadIdx.x) < stride) lanes[threadIdx.x] += lanes[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = lanes[0];
}

__global__ void sum_partials_kernel(const double* partial /* (count) */, int count,
                                    double* out /* (1), added to */) {
  if (threadIdx.x != 0) return;
  double total = 0;
  for (int b = 0; b < count; ++b) total += partial[b];
  *out += total;
}

__global__ void clip_scale_kernel(const double* sumsq, float max_norm, float* scale) {
  const double s = double(max_norm) / (sqrt(*sumsq) + 1e-6);
  *scale = static_cast<float>(s < 1.0 ? s : 1.0);
}

struct OptimizerArgs {
  OptimizerKind kind;
  bool nesterov;
  float lr, momentum, beta1, beta2, alpha, eps, weight_decay;
  float adam_step;          // lr / (1 - beta1^t)
  float adam_inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
};

__global__ void optimizer_kernel(OptimizerArgs a, float* params /* (n) */,
                                 const float* grads /* (n) */, float* state1 /* (n) */,
                                 float* state2 /* (n) or null */, std::size_t n,
                                 const float* grad_scale /* (1) or null */,
                                 const StepScalars* dyn /* (1) or null */) {
  const float gs = grad_scale ? *grad_scale : 1.f;
  const float lr = dyn ? dyn->lr : a.lr;
  const float adam_step = dyn ? dyn->adam_step : a.adam_step;
  const float adam_inv_sqrt_bc2 = dyn ? dyn->adam_inv_sqrt_bc2 : a.adam_inv_sqrt_bc2;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float p = params[i];
    const float g = grads[i] * gs + a.weight_decay * p;
    switch (a.kind) {
      case OptimizerKind::sgdm: {
        const float v = a.momentum * state1[i] + g;
        state1[i] = v;
        params[i] = p - lr * (a.nesterov ? g + a.momentum * v : v);
        break;
      }
      case OptimizerKind::adam: {
        const float m = a.beta1 * state1[i] + (1.f - a.beta1) * g;
        const float v = a.beta2 * state2[i] + (1.f - a.beta2) * g * g;
        state1[i] = m;
        state2[i] = v;
        params[i] = p - adam_step * m / (sqrtf(v) * adam_inv_sqrt_bc2 + a.eps);
        break;
      }
      case OptimizerKind::rmsprop: {
        const float v = a.alpha * state1[i] + (1.f - a.alpha) * g * g;
        state1[i] = v;
        params[i] = p - lr * g / (sqrtf(v) + a.eps);
        break;
      }
    }
  }
}

// ----------------------------------------------------------------------------- launchers

// partial: scratch of kSumSquaresBlocks doubles.
inline void sum_squares(const float* x, std::size_t n, double* out, double* partial,
                        cudaStream_t s) {
  const int blocks = static_cast<int>(std::min<std::size_t>(
      kSumSquaresBlocks, std::max<std::size_t>(1, (n + kThreads - 1) / kThreads)));
  sum_squares_partial_kernel<<<blocks, kThreads, 0, s>>>(x, n, partial);
  SWEEP_CHECK_LAUNCH();
  sum_partials_kernel<<<1, 32, 0, s>>>(partial, blocks, out);
  SWEEP_CHECK_LAUNCH();
}

inline void clip_scale(const double* sumsq, float max_norm, float* scale, cudaStream_t s) {
  clip_scale_kernel<<<1, 1, 0, s>>>(sumsq, max_norm, scale);
  SWEEP_CHECK_LAUNCH();
}

inline void optimizer_step(const OptimizerArgs& a, float* params, const float* grads, float* state1,
                           float* state2, std::size_t n, const float* grad_scale,
                           const StepScalars* dyn, cudaStream_t s) {
  if (!n) return;
  optimizer_kernel<<<grid_for(n), kThreads, 0, s>>>(a, params, grads, state1, state2, n, grad_scale,
                                                    dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
