/*
 * maxpool2x2.cuh — 2x2 max pooling with stride 2 and no padding (nearly every CNN's pooling) as
 * our own kernels, beside the cuDNN plan that serves every other pooling.
 *
 * Why: cuDNN's pooling kernels cost about twice a plain elementwise pass on LeNet's small planes,
 * and its step is launch- and latency-bound. The rules are the CPU backend's 2x2 fast path
 * (cpu_pool.cpp), so the two backends agree bit for bit: the forward is max(max(a, b), max(c, d))
 * with std::max's semantics (a < b ? b : a), and the backward routes each window's gradient to
 * its first element (row-major) equal to the pooled value. Both run a thread per window, or, for
 * a step that shares the GPU with others (a fused array's member), a thread per kSharedWindows
 * windows, all read before any is written: as many loads in flight from a quarter of the warps,
 * which the other members' kernels then have (a lone step is a little slower so, and keeps a
 * thread per window). The backward writes
 * every element of dx once (the trailing odd row or column zero). The forward can also keep each
 * window's argmax (first_max, a byte), and a backward reads that and dy instead of x and y: for a
 * pooling its convolution computes (tiled_conv.h pools in shared memory, so x is never written).
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

__device__ __forceinline__ float std_max(float a, float b) { return a < b ? b : a; }

// x (planes, h, w) -> y (planes, out_h, out_w), out_h = h / 2, out_w = w / 2. Index is int where
// the tensor allows (a 64-bit division per element cost these memory-bound kernels more than their
// loads: a tenth of a fused LeNet array's step), else size_t. kEven: w is even, so each window row
// is one aligned float2. Window o (a flat index over planes x out_h x out_w): its top-left
// element's offset in x (and dx), its place, and its four values in row-major order.
struct PoolPlace {
  std::size_t base;
  int oh, ow;
};
struct PoolWindow : PoolPlace {
  float a, b, c, d;
};
template <class Index>
__device__ __forceinline__ PoolPlace window_place(Index o, Index plane, int h, int w, int out_w) {
  const Index p = o / plane;
  const int q = static_cast<int>(o - p * plane);
  PoolPlace v;
  v.oh = q / out_w, v.ow = q - v.oh * out_w;
  v.base = (std::size_t(p) * h + 2 * v.oh) * w + 2 * v.ow;
  return v;
}
template <class Index, bool kEven>
__device__ __forceinline__ PoolWindow read_window(const float* x, Index o, Index plane, int h,
                                                  int w, int out_w) {
  PoolWindow v;
  static_cast<PoolPlace&>(v) = window_place(o, plane, h, w, out_w);
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

// Windows a thread takes when its step shares the GPU (see the top).
constexpr int kSharedWindows = 4;

// The element of window v that takes its gradient: the first (row-major) equal to the maximum m,
// 4 when none is (a NaN in the window). Backend::maxpool2x2_forward_argmax keeps it.
__device__ __forceinline__ int first_max(const PoolWindow& v, float m) {
  return v.a == m ? 0 : v.b == m ? 1 : v.c == m ? 2 : v.d == m ? 3 : 4;
}

// A thread's windows: o, o + stride, ... (kWindows of them, those below total), every one read
// before the first is written. argmax (may be null): each window's first_max.
template <class Index, bool kEven, int kWindows>
__global__ void maxpool2x2_forward_kernel(const float* __restrict__ x, float* __restrict__ y,
                                          std::uint8_t* __restrict__ argmax, Index planes, int h,
                                          int w, int out_h, int out_w) {
  const Index plane = Index(out_h) * out_w, total = planes * plane;
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index o = blockIdx.x * Index(blockDim.x) + threadIdx.x; o < total; o += stride * kWindows) {
    PoolWindow v[kWindows];
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total)
        v[u] = read_window<Index, kEven>(x, o + u * stride, plane, h, w, out_w);
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total) {
        const float m = std_max(std_max(v[u].a, v[u].b), std_max(v[u].c, v[u].d));
        y[o + u * stride] = m;
        if (argmax) argmax[o + u * stride] = static_cast<std::uint8_t>(first_max(v[u], m));
      }
  }
}

// dx from dy: window v's four elements (the gradient g to the first, in row-major order, equal to
// the pooled value m; zeros elsewhere), and for the last window of a row or column also the zeros
// of a trailing odd column or row, so every element is written once.
template <bool kEven>
__device__ __forceinline__ void write_window_gradient(const PoolPlace& v, int first, float g,
                                                      float* __restrict__ dx, int h, int w,
                                                      int out_h, int out_w) {
  float* d0 = dx + v.base;
  const float ga = first == 0 ? g : 0.f, gb = first == 1 ? g : 0.f;
  const float gc = first == 2 ? g : 0.f, gd = first == 3 ? g : 0.f;
  if constexpr (kEven) {
    *reinterpret_cast<float2*>(d0) = make_float2(ga, gb);
    *reinterpret_cast<float2*>(d0 + w) = make_float2(gc, gd);
  } else {
    d0[0] = ga, d0[1] = gb, d0[w] = gc, d0[w + 1] = gd;
    if (v.ow == out_w - 1 && w % 2) d0[2] = 0.f, d0[w + 2] = 0.f;  // the trailing column
  }
  if (v.oh == out_h - 1 && h % 2) {  // the trailing row
    float* d2 = d0 + 2 * std::size_t(w);
    d2[0] = 0.f, d2[1] = 0.f;
    if (v.ow == out_w - 1 && w % 2) d2[2] = 0.f;
  }
}

template <class Index, bool kEven, int kWindows>
__global__ void maxpool2x2_backward_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                           const float* __restrict__ dy, float* __restrict__ dx,
                                           Index planes, int h, int w, int out_h, int out_w) {
  const Index plane = Index(out_h) * out_w, total = planes * plane;
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index o = blockIdx.x * Index(blockDim.x) + threadIdx.x; o < total; o += stride * kWindows) {
    PoolWindow v[kWindows];
    float m[kWindows], g[kWindows];
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total) {
        v[u] = read_window<Index, kEven>(x, o + u * stride, plane, h, w, out_w);
        m[u] = y[o + u * stride];
        g[u] = dy[o + u * stride];
      }
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total)
        write_window_gradient<kEven>(v[u], first_max(v[u], m[u]), g[u], dx, h, w, out_h, out_w);
  }
}

// The backward from the forward's argmax bytes: a byte and dy a window instead of x's four values,
// y and dy.
template <class Index, bool kEven, int kWindows>
__global__ void maxpool2x2_backward_argmax_kernel(const std::uint8_t* __restrict__ argmax,
                                                  const float* __restrict__ dy,
                                                  float* __restrict__ dx, Index planes, int h,
                                                  int w, int out_h, int out_w) {
  const Index plane = Index(out_h) * out_w, total = planes * plane;
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index o = blockIdx.x * Index(blockDim.x) + threadIdx.x; o < total; o += stride * kWindows) {
    int first[kWindows];
    float g[kWindows];
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total) {
        first[u] = argmax[o + u * stride];
        g[u] = dy[o + u * stride];
      }
#pragma unroll
    for (int u = 0; u < kWindows; ++u)
      if (o + u * stride < total)
        write_window_gradient<kEven>(window_place(o + u * stride, plane, h, w, out_w), first[u],
                                     g[u], dx, h, w, out_h, out_w);
  }
}

// Launch<Index, kEven>::run(args...) for the tensor's size and width. (Index int below 2^31
// elements: a thread's last window, o + (kWindows - 1) * stride, then stays below 2^31 too.)
template <template <class, bool> class Launch, class... Args>
void maxpool2x2_dispatch(std::size_t elements, int w, const Args&... args) {
  const bool small = elements < (std::size_t{1} << 31), even = w % 2 == 0;
  if (small && even) return Launch<int, true>::run(args...);
  if (small) return Launch<int, false>::run(args...);
  if (even) return Launch<std::size_t, true>::run(args...);
  Launch<std::size_t, false>::run(args...);
}

// A thread per window (`one`), or per kSharedWindows windows (`shared`: the step shares the GPU),
// for `total` windows.
template <class Kernel, class... Args>
void launch_windows(Kernel one, Kernel shared_kernel, std::size_t total, bool shared,
                    cudaStream_t s, const Args&... args) {
  if (shared)
    shared_kernel<<<grid_for((total + kSharedWindows - 1) / kSharedWindows), kThreads, 0, s>>>(
        args...);
  else
    one<<<grid_for(total), kThreads, 0, s>>>(args...);
  SWEEP_CHECK_LAUNCH();
}

template <class Index, bool kEven>
struct Maxpool2x2Forward {
  static void run(const float* x, float* y, std::uint8_t* argmax, std::size_t planes, int h, int w,
                  int out_h, int out_w, bool shared, cudaStream_t s) {
    launch_windows(maxpool2x2_forward_kernel<Index, kEven, 1>,
                   maxpool2x2_forward_kernel<Index, kEven, kSharedWindows>, planes * out_h * out_w,
                   shared, s, x, y, argmax, Index(planes), h, w, out_h, out_w);
  }
};

template <class Index, bool kEven>
struct Maxpool2x2Backward {
  static void run(const float* x, const float* y, const float* dy, float* dx, std::size_t planes,
                  int h, int w, int out_h, int out_w, bool shared, cudaStream_t s) {
    launch_windows(maxpool2x2_backward_kernel<Index, kEven, 1>,
                   maxpool2x2_backward_kernel<Index, kEven, kSharedWindows>, planes * out_h * out_w,
                   shared, s, x, y, dy, dx, Index(planes), h, w, out_h, out_w);
  }
};

template <class Index, bool kEven>
struct Maxpool2x2BackwardArgmax {
  static void run(const std::uint8_t* argmax, const float* dy, float* dx, std::size_t planes, int h,
                  int w, int out_h, int out_w, bool shared, cudaStream_t s) {
    launch_windows(maxpool2x2_backward_argmax_kernel<Index, kEven, 1>,
                   maxpool2x2_backward_argmax_kernel<Index, kEven, kSharedWindows>,
                   planes * out_h * out_w, shared, s, argmax, dy, dx, Index(planes), h, w, out_h,
                   out_w);
  }
};

// argmax (may be null): each window's first_max, for maxpool2x2_backward_argmax.
inline void maxpool2x2_forward(const float* x, float* y, std::uint8_t* argmax, std::size_t planes,
                               int h, int w, int out_h, int out_w, bool shared, cudaStream_t s) {
  if (!planes || !out_h || !out_w) return;
  maxpool2x2_dispatch<Maxpool2x2Forward>(planes * h * w, w, x, y, argmax, planes, h, w, out_h,
                                         out_w, shared, s);
}

inline void maxpool2x2_backward(const float* x, const float* y, const float* dy, float* dx,
                                std::size_t planes, int h, int w, int out_h, int out_w, bool shared,
                                cudaStream_t s) {
  if (!planes || !h || !w) return;
  if (!out_h || !out_w) {  // no window: every element's gradient is zero
    SWEEP_CHECK_CUDA(cudaMemsetAsync(dx, 0, planes * h * w * sizeof(float), s));
    return;
  }
  maxpool2x2_dispatch<Maxpool2x2Backward>(planes * h * w, w, x, y, dy, dx, planes, h, w, out_h,
                                          out_w, shared, s);
}

// dx from the forward's argmax bytes and dy: maxpool2x2_backward's dx, bit for bit.
inline void maxpool2x2_backward_argmax(const std::uint8_t* argmax, const float* dy, float* dx,
                                       std::size_t planes, int h, int w, int out_h, int out_w,
                                       bool shared, cudaStream_t s) {
  if (!planes || !h || !w) return;
  if (!out_h || !out_w) {  // no window: every element's gradient is zero
    SWEEP_CHECK_CUDA(cudaMemsetAsync(dx, 0, planes * h * w * sizeof(float), s));
    return;
  }
  maxpool2x2_dispatch<Maxpool2x2BackwardArgmax>(planes * h * w, w, argmax, dy, dx, planes, h, w,
                                                out_h, out_w, shared, s);
}

}  // namespace sweep::trainer::cuda
