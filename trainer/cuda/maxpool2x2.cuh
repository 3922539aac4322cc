/*
 * maxpool2x2.cuh — 2x2 max pooling with stride 2 and no padding (nearly every CNN's pooling) as
 * our own kernels, beside the cuDNN plan that serves every other pooling.
 *
 * Why: cuDNN's pooling kernels cost about twice a plain elementwise pass on LeNet's small planes,
 * and its step is launch- and latency-bound. The rules are the CPU backend's 2x2 fast path
 * (cpu_pool.cpp), so the two backends agree bit for bit: the forward is max(max(a, b), max(c, d))
 * with std::max's semantics (a < b ? b : a), and the backward routes each window's gradient to
 * its first element (row-major) equal to the pooled value. The backward runs one thread per input
 * element (coalesced writes, every element written once, the trailing odd row or column zero).
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

__device__ __forceinline__ float std_max(float a, float b) { return a < b ? b : a; }

// x (planes, h, w) -> y (planes, out_h, out_w), out_h = h / 2, out_w = w / 2.
__global__ void maxpool2x2_forward_kernel(const float* x, float* y, std::size_t planes, int h,
                                          int w, int out_h, int out_w) {
  const std::size_t total = planes * out_h * out_w;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t p = o / (std::size_t(out_h) * out_w);
    const int q = static_cast<int>(o % (std::size_t(out_h) * out_w));
    const int oh = q / out_w, ow = q % out_w;
    const float* r0 = x + (p * h + 2 * oh) * w + 2 * ow;
    const float* r1 = r0 + w;
    y[o] = std_max(std_max(r0[0], r0[1]), std_max(r1[0], r1[1]));
  }
}

__global__ void maxpool2x2_backward_kernel(const float* x, const float* y, const float* dy,
                                           float* dx, std::size_t planes, int h, int w, int out_h,
                                           int out_w) {
  const std::size_t total = planes * h * w;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < total;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t p = i / (std::size_t(h) * w);
    const int q = static_cast<int>(i % (std::size_t(h) * w));
    const int ih = q / w, iw = q % w, oh = ih / 2, ow = iw / 2;
    float grad = 0.f;
    if (oh < out_h && ow < out_w) {
      const std::size_t o = (p * out_h + oh) * out_w + ow;
      const float m = y[o];
      const float* r0 = x + (p * h + 2 * oh) * w + 2 * ow;
      const float* r1 = r0 + w;
      const bool e0 = r0[0] == m, e1 = r0[1] == m, e2 = r1[0] == m;
      const int me = (ih % 2) * 2 + iw % 2;  // this element's place in the window
      // The first maximum in row-major window order takes the gradient.
      const int first = e0 ? 0 : e1 ? 1 : e2 ? 2 : 3;
      const bool is_max = me == first && (me < 3 || r1[1] == m);
      if (is_max) grad = dy[o];
    }
    dx[i] = grad;
  }
}

inline void maxpool2x2_forward(const float* x, float* y, std::size_t planes, int h, int w,
                               int out_h, int out_w, cudaStream_t s) {
  const std::size_t total = planes * out_h * out_w;
  if (!total) return;
  maxpool2x2_forward_kernel<<<grid_for(total), kThreads, 0, s>>>(x, y, planes, h, w, out_h, out_w);
  SWEEP_CHECK_LAUNCH();
}

inline void maxpool2x2_backward(const float* x, const float* y, const float* dy, float* dx,
                                std::size_t planes, int h, int w, int out_h, int out_w,
                                cudaStream_t s) {
  const std::size_t total = planes * h * w;
  if (!total) return;
  maxpool2x2_backward_kernel<<<grid_for(total), kThreads, 0, s>>>(x, y, dy, dx, planes, h, w, out_h,
                                                                  out_w);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
