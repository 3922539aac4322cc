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
#include "trainer/backend/backend.h"
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

// One parameter's update; s2 is read and written by Adam only.
__device__ __forceinline__ float updated(const OptimizerArgs& a, float p, float grad, float& s1,
                                         float& s2, float gs, float lr, float adam_step,
                                         float adam_inv_sqrt_bc2) {
  const float g = grad * gs + a.weight_decay * p;
  switch (a.kind) {
    case OptimizerKind::sgdm: {
      const float v = a.momentum * s1 + g;
      s1 = v;
      return p - lr * (a.nesterov ? g + a.momentum * v : v);
    }
    case OptimizerKind::adam: {
      const float m = a.beta1 * s1 + (1.f - a.beta1) * g;
      const float v = a.beta2 * s2 + (1.f - a.beta2) * g * g;
      s1 = m;
      s2 = v;
      return p - adam_step * m / (sqrtf(v) * adam_inv_sqrt_bc2 + a.eps);
    }
    case OptimizerKind::rmsprop: {
      const float v = a.alpha * s1 + (1.f - a.alpha) * g * g;
      s1 = v;
      return p - lr * g / (sqrtf(v) + a.eps);
    }
  }
  return p;
}

// kVec4: every array is 16-byte aligned; a thread updates four adjacent parameters with float4
// loads and stores, the last n % 4 one each. The same loads in flight from a quarter of the warps:
// one thread a parameter held every SM's warps for the update's length, which in a fused array
// the other members' kernels wanted (a lone step runs as fast either way).
// The same arithmetic per parameter either way (updated()): the same bits.
template <bool kVec4>
__global__ void optimizer_kernel(OptimizerArgs a, float* params /* (n) */,
                                 const float* grads /* (n) */, float* state1 /* (n) */,
                                 float* state2 /* (n) or null */, std::size_t n,
                                 const float* grad_scale /* (1) or null */,
                                 const StepScalars* dyn /* (1) or null */) {
  const float gs = grad_scale ? *grad_scale : 1.f;
  const float lr = dyn ? dyn->lr : a.lr;
  const float adam_step = dyn ? dyn->adam_step : a.adam_step;
  const float adam_inv_sqrt_bc2 = dyn ? dyn->adam_inv_sqrt_bc2 : a.adam_inv_sqrt_bc2;
  const std::size_t first = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t scalar_from = 0;
  if constexpr (kVec4) {
    const std::size_t n4 = n / 4;
    for (std::size_t i = first; i < n4; i += stride) {
      float4 p = reinterpret_cast<const float4*>(params)[i];
      const float4 g = reinterpret_cast<const float4*>(grads)[i];
      float4 s1 = reinterpret_cast<const float4*>(state1)[i];
      float4 s2 = state2 ? reinterpret_cast<const float4*>(state2)[i] : float4{};
      p.x = updated(a, p.x, g.x, s1.x, s2.x, gs, lr, adam_step, adam_inv_sqrt_bc2);
      p.y = updated(a, p.y, g.y, s1.y, s2.y, gs, lr, adam_step, adam_inv_sqrt_bc2);
      p.z = updated(a, p.z, g.z, s1.z, s2.z, gs, lr, adam_step, adam_inv_sqrt_bc2);
      p.w = updated(a, p.w, g.w, s1.w, s2.w, gs, lr, adam_step, adam_inv_sqrt_bc2);
      reinterpret_cast<float4*>(params)[i] = p;
      reinterpret_cast<float4*>(state1)[i] = s1;
      if (state2) reinterpret_cast<float4*>(state2)[i] = s2;
    }
    scalar_from = n4 * 4;
  }
  for (std::size_t i = scalar_from + first; i < n; i += stride) {
    float s1 = state1[i], s2 = state2 ? state2[i] : 0.f;
    params[i] = updated(a, params[i], grads[i], s1, s2, gs, lr, adam_step, adam_inv_sqrt_bc2);
    state1[i] = s1;
    if (state2) state2[i] = s2;
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
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (aligned(params) && aligned(grads) && aligned(state1) && (!state2 || aligned(state2)))
    optimizer_kernel<true><<<grid_for((n + 3) / 4), kThreads, 0, s>>>(a, params, grads, state1,
                                                                      state2, n, grad_scale, dyn);
  else
    optimizer_kernel<false>
        <<<grid_for(n), kThreads, 0, s>>>(a, params, grads, state1, state2, n, grad_scale, dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
