/*
 * maxpool2x2.cuh — 2x2 max pooling with stride 2 and no padding (nearly every CNN's pooling) as
 * our own kernels, beside the cuDNN plan that serves every other pooling.
 *
 * Why: cuDNN's pooling kernels cost about twice a plain elementwise pass on LeNet's small planes,
 * and its step is launch- and latency-bound. The rules are the CPU backend's 2x2 fast path
 * (cpu_pool.cpp), so the two backends agree bit for bit: the forward is max(max(a, b), max(c, d))
 * with std::max's semantics (a < b ? b : a), and the backward routes each window's gradient to
 * its first element (row-major) equal to the pooled value. Both run a thread per window; the
 * backward writes every element of dx once (the trailing odd row or column zero).
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

__device__ __forceinline__ float std_max(float a, float b) { return a < b ? b : a; }

// x (planes, h, w) -> y (planes, out_h, out_w), out_h = h / 2, out_w = w / 2: a thread per
// window. Index is int where the tensor allows (a 64-bit division per element cost these
// memory-bound kernels more than their loads: a tenth of a fused LeNet array's step), else
// size_t. kEven: w is even, so each window row is one aligned float2.
// Window o (a flat index over planes x out_h x out_w): its top-left element's offset in x (and
// dx), its place, and its four values in row-major order.
struct PoolWindow {
  std::size_t base;
  int oh, ow;
  float a, b, c, d;
};
template <class Index, bool kEven>
__device__ __forceinline__ PoolWindow read_window(const float* x, Index o, Index plane, int h,
                                                  int w, int out_w) {
  const Index p = o / plane;
  const int q = static_cast<int>(o - p * plane);
  PoolWindow v;
  v.oh = q / out_w, v.ow = q - v.oh * out_w;
  v.base = (std::size_t(p) * h + 2 * v.oh) * w + 2 * v.ow;
  const float* r0 = x + v.base;
  if constexpr (kEven) {
    const float2 top = *reinterpret_cast<const float2*>(r0);
    const float2 bottom = *reinterpret_cast<const float2*>(r0 + w);
    v.a = top.x, v.b = top.y, v.c = bottom.x, v.d = bottom.y;
  } else {
    v.a = r0[0], v.b = r0[1], v.c = r0[w], v.d = r0[w + 1];
  }
  return v;
}

template <class Index, bool kEven>
__global__ void maxpool2x2_forward_kernel(const float* __restrict__ x, float* __restrict__ y,
                                          Index planes, int h, int w, int out_h, int out_w) {
  const Index plane = Index(out_h) * out_w, total = planes * plane;
  for (Index o = blockIdx.x * Index(blockDim.x) + threadIdx.x; o < total;
       o += Index(gridDim.x) * blockDim.x) {
    const PoolWindow v = read_window<Index, kEven>(x, o, plane, h, w, out_w);
    y[o] = std_max(std_max(v.a, v.b), std_max(v.c, v.d));
  }
}

// dx from dy: a thread per window writes its four elements (the gradient to the first, in
// row-major order, equal to the pooled value; zeros elsewhere), and the last window of a row or
// column also the zeros of a trailing odd column or row, so every element is written once.
template <class Index, bool kEven>
__global__ void maxpool2x2_backward_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                           const float* __restrict__ dy, float* __restrict__ dx,
                                           Index planes, int h, int w, int out_h, int out_w) {
  const Index plane = Index(out_h) * out_w, total = planes * plane;
  for (Index o = blockIdx.x * Index(blockDim.x) + threadIdx.x; o < total;
       o += Index(gridDim.x) * blockDim.x) {
    const PoolWindow v = read_window<Index, kEven>(x, o, plane, h, w, out_w);
    const int oh = v.oh, ow = v.ow;
    float* d0 = dx + v.base;
    const float m = y[o], g = dy[o];
    const int first = v.a == m ? 0 : v.b == m ? 1 : v.c == m ? 2 : v.d == m ? 3 : 4;
    const float ga = first == 0 ? g : 0.f, gb = first == 1 ? g : 0.f;
    const float gc = first == 2 ? g : 0.f, gd = first == 3 ? g : 0.f;
    if constexpr (kEven) {
      *reinterpret_cast<float2*>(d0) = make_float2(ga, gb);
      *reinterpret_cast<float2*>(d0 + w) = make_float2(gc, gd);
    } else {
      d0[0] = ga, d0[1] = gb, d0[w] = gc, d0[w + 1] = gd;
      if (ow == out_w - 1 && w % 2) d0[2] = 0.f, d0[w + 2] = 0.f;  // the trailing column
    }
    if (oh == out_h - 1 && h % 2) {  // the trailing row
      float* d2 = d0 + 2 * std::size_t(w);
      d2[0] = 0.f, d2[1] = 0.f;
      if (ow == out_w - 1 && w % 2) d2[2] = 0.f;
    }
  }
}

// Launch<Index, kEven>::run(args...) for the tensor's size and width.
template <template <class, bool> class Launch, class... Args>
void maxpool2x2_dispatch(std::size_t elements, int w, const Args&... args) {
  const bool small = elements < (std::size_t{1} << 31), even = w % 2 == 0;
  if (small && even) return Launch<int, true>::run(args...);
  if (small) return Launch<int, false>::run(args...);
  if (even) return Launch<std::size_t, true>::run(args...);
  Launch<std::size_t, false>::run(args...);
}

template <class Index, bool kEven>
struct Maxpool2x2Forward {
  static void run(const float* x, float* y, std::size_t planes, int h, int w, int out_h, int out_w,
                  cudaStream_t s) {
    const std::size_t total = planes * out_h * out_w;
    maxpool2x2_forward_kernel<Index, kEven>
        <<<grid_for(total), kThreads, 0, s>>>(x, y, Index(planes), h, w, out_h, out_w);
    SWEEP_CHECK_LAUNCH();
  }
};

template <class Index, bool kEven>
struct Maxpool2x2Backward {
  static void run(const float* x, const float* y, const float* dy, float* dx, std::size_t planes,
                  int h, int w, int out_h, int out_w, cudaStream_t s) {
    const std::size_t total = planes * out_h * out_w;
    maxpool2x2_backward_kernel<Index, kEven>
        <<<grid_for(total), kThreads, 0, s>>>(x, y, dy, dx, Index(planes), h, w, out_h, out_w);
    SWEEP_CHECK_LAUNCH();
  }
};

inline void maxpool2x2_forward(const float* x, float* y, std::size_t planes, int h, int w,
                               int out_h, int out_w, cudaStream_t s) {
  if (!planes || !out_h || !out_w) return;
  maxpool2x2_dispatch<Maxpool2x2Forward>(planes * h * w, w, x, y, planes, h, w, out_h, out_w, s);
}

inline void maxpool2x2_backward(const float* x, const float* y, const float* dy, float* dx,
                                std::size_t planes, int h, int w, int out_h, int out_w,
                                cudaStream_t s) {
  if (!planes || !h || !w) return;
  if (!out_h || !out_w) {  // no window: every element's gradient is zero
    SWEEP_CHECK_CUDA(cudaMemsetAsync(dx, 0, planes * h * w * sizeof(float), s));
    return;
  }
  maxpool2x2_dispatch<Maxpool2x2Backward>(planes * h * w, w, x, y, dy, dx, planes, h, w, out_h,
                                          out_w, s);
}

}  // namespace sweep::trainer::cuda
