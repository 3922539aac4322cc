/*
 * nhwc_pool.cu — 2x2 max pooling and global average pooling on NHWC activations, forward and
 * backward (nhwc_activations.h), a template on the element type T (__nv_bfloat16 or float): the
 * fp32 kernels' and the CPU backend's rules, a pack of channels a thread where the shape and the
 * pointers allow it.
 */
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_pack.cuh"

namespace sweep::trainer::cuda {

namespace {

using namespace nhwc;

__device__ __forceinline__ float std_max(float a, float b) { return a < b ? b : a; }

// One thread per output pixel and pack of V channels: y = max(max(x00, x01), max(x10, x11)) with
// std::max's semantics, as maxpool2x2_forward_kernel and the CPU backend.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    maxpool_forward_kernel(const T* __restrict__ x, T* __restrict__ y, unsigned total, unsigned c,
                           unsigned h, unsigned w, unsigned out_h, unsigned out_w) {
  const unsigned packs = c / V;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, pix = o / packs;  // pix: output pixel, (ni, oh, ow)
    const unsigned ow = pix % out_w, oh = pix / out_w % out_h, ni = pix / out_w / out_h;
    const T* r0 = x + ((ni * h + 2 * oh) * w + 2 * ow) * c + ci;
    const T* r1 = r0 + w * c;
    float v00[V], v01[V], v10[V], v11[V];
    load<T, V>(r0, v00);
    load<T, V>(r0 + c, v01);
    load<T, V>(r1, v10);
    load<T, V>(r1 + c, v11);
#pragma unroll
    for (int j = 0; j < V; ++j) v00[j] = std_max(std_max(v00[j], v01[j]), std_max(v10[j], v11[j]));
    store<T, V>(y + pix * c + ci, v00);
  }
}

// One thread per window of the input rounded up ((h + 1) / 2 x (w + 1) / 2) and pack of V
// channels, writing the window's (up to) four inputs: a full window routes dy to its first
// element (row-major) equal to y, as maxpool2x2_backward_kernel (no element at all when none is
// equal: a NaN window); a window cut by the floor is a trailing odd row or column, all zeros.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    maxpool_backward_kernel(const T* __restrict__ x, const T* __restrict__ y,
                            const T* __restrict__ dy, T* __restrict__ dx, unsigned total,
                            unsigned c, unsigned h, unsigned w, unsigned out_h, unsigned out_w) {
  const unsigned packs = c / V, win_h = (h + 1) / 2, win_w = (w + 1) / 2;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, win = o / packs;
    const unsigned ww = win % win_w, wh = win / win_w % win_h, ni = win / win_w / win_h;
    const unsigned i00 = ((ni * h + 2 * wh) * w + 2 * ww) * c + ci, i10 = i00 + w * c;
    float g00[V] = {}, g01[V] = {}, g10[V] = {}, g11[V] = {};
    if (wh < out_h && ww < out_w) {
      const unsigned io = ((ni * out_h + wh) * out_w + ww) * c + ci;
      float m[V], d[V], v00[V], v01[V], v10[V], v11[V];
      load<T, V>(y + io, m);
      load<T, V>(dy + io, d);
      load<T, V>(x + i00, v00);
      load<T, V>(x + i00 + c, v01);
      load<T, V>(x + i10, v10);
      load<T, V>(x + i10 + c, v11);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const bool e0 = v00[j] == m[j], e1 = v01[j] == m[j], e2 = v10[j] == m[j],
                   e3 = v11[j] == m[j];
        g00[j] = e0 ? d[j] : 0.f;
        g01[j] = !e0 && e1 ? d[j] : 0.f;
        g10[j] = !e0 && !e1 && e2 ? d[j] : 0.f;
        g11[j] = !e0 && !e1 && !e2 && e3 ? d[j] : 0.f;
      }
    }
    const bool right = 2 * ww + 1 < w, below = 2 * wh + 1 < h;  // the window's other elements
    store<T, V>(dx + i00, g00);
    if (right) store<T, V>(dx + i00 + c, g01);
    if (below) store<T, V>(dx + i10, g10);
    if (right && below) store<T, V>(dx + i10 + c, g11);
  }
}

// One thread per (image, channel), summing its pixels in order as the CPU backend's average pool
// (cpu_pool.cpp: a float sum in window order, times 1.f / area): the same bits as the CPU on the
// NCHW tensor. Consecutive threads read consecutive channels of one pixel (coalesced).
template <class T>
__global__ void __launch_bounds__(kThreads)
    avgpool_forward_kernel(const T* __restrict__ x, float* __restrict__ y, unsigned planes,
                           unsigned c, unsigned hw, float inv_area) {
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < planes;
       o += gridDim.x * blockDim.x) {
    const unsigned ni = o / c, ci = o - ni * c;
    const T* p = x + ni * hw * c + ci;
    float sum = 0.f;
#pragma unroll 8
    for (unsigned q = 0; q < hw; ++q) sum += widen(p[q * c]);
    y[o] = sum * inv_area;
  }
}

// One thread per pixel and pack of V channels: dx = dy * (1 / area), the CPU backend's share.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    avgpool_backward_kernel(const float* __restrict__ dy, T* __restrict__ dx, unsigned total,
                            unsigned c, unsigned hw, float inv_area) {
  const unsigned packs = c / V;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, pix = o / packs, ni = pix / hw;
    float v[V];
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = dy[ni * c + ci + j] * inv_area;
    store<T, V>(dx + pix * c + ci, v);
  }
}

// ---------------------------------------------------------------------------- launchers

// The launchers for either T; the public overloads below forward to them.
namespace generic {

template <class T>
void maxpool_forward(int n, int c, int h, int w, const T* x, T* y, cudaStream_t stream) {
  checked_size(name_for<T>("maxpool2x2 (bf16 NHWC)", "maxpool2x2 (fp32 NHWC)"),
               std::size_t(n) * c * h * w);
  const unsigned out_h = unsigned(h / 2), out_w = unsigned(w / 2);
  const int pack = pack_for<T>(c, x, y);
  const unsigned total = unsigned(n) * out_h * out_w * unsigned(c / pack);
  if (!total) return;
  by_pack<T>(pack, [&](auto v) {
    maxpool_forward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        x, y, total, unsigned(c), unsigned(h), unsigned(w), out_h, out_w);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void maxpool_backward(int n, int c, int h, int w, const T* x, const T* y, const T* dy, T* dx,
                      cudaStream_t stream) {
  checked_size(name_for<T>("maxpool2x2 (bf16 NHWC)", "maxpool2x2 (fp32 NHWC)"),
               std::size_t(n) * c * h * w);
  const unsigned out_h = unsigned(h / 2), out_w = unsigned(w / 2);
  const int pack = pack_for<T>(c, x, y, dy, dx);
  const unsigned total =
      unsigned(n) * unsigned((h + 1) / 2) * unsigned((w + 1) / 2) * unsigned(c / pack);
  if (!total) return;
  by_pack<T>(pack, [&](auto v) {
    maxpool_backward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        x, y, dy, dx, total, unsigned(c), unsigned(h), unsigned(w), out_h, out_w);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void avgpool_forward(int n, int c, int hw, const T* x, float* y, cudaStream_t stream) {
  checked_size(name_for<T>("global average pool (bf16 NHWC)", "global average pool (fp32 NHWC)"),
               std::size_t(n) * c * hw);
  const unsigned planes = unsigned(n) * unsigned(c);
  if (!planes) return;
  const float inv_area = 1.f / static_cast<float>(hw);  // cpu_pool.cpp's inv_area
  avgpool_forward_kernel<T><<<grid_for(planes), kThreads, 0, stream>>>(x, y, planes, unsigned(c),
                                                                       unsigned(hw), inv_area);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

template <class T>
void avgpool_backward(int n, int c, int hw, const float* dy, T* dx, cudaStream_t stream) {
  const unsigned size = checked_size(
      name_for<T>("global average pool (bf16 NHWC)", "global average pool (fp32 NHWC)"),
      std::size_t(n) * c * hw);
  if (!size) return;
  const int pack = pack_for<T>(c, dx);
  const unsigned total = size / unsigned(pack);
  const float inv_area = 1.f / static_cast<float>(hw);
  by_pack<T>(pack, [&](auto v) {
    avgpool_backward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        dy, dx, total, unsigned(c), unsigned(hw), inv_area);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

}  // namespace generic

}  // namespace

void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x, __nv_bfloat16* y,
                             cudaStream_t stream) {
  generic::maxpool_forward(n, c, h, w, x, y, stream);
}

void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const float* x, float* y,
                             cudaStream_t stream) {
  generic::maxpool_forward(n, c, h, w, x, y, stream);
}

void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x,
                              const __nv_bfloat16* y, const __nv_bfloat16* dy, __nv_bfloat16* dx,
                              cudaStream_t stream) {
  generic::maxpool_backward(n, c, h, w, x, y, dy, dx, stream);
}

void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const float* x, const float* y,
                              const float* dy, float* dx, cudaStream_t stream) {
  generic::maxpool_backward(n, c, h, w, x, y, dy, dx, stream);
}

void global_avgpool_forward_nhwc(int n, int c, int hw, const __nv_bfloat16* x, float* y,
                                 cudaStream_t stream) {
  generic::avgpool_forward(n, c, hw, x, y, stream);
}

void global_avgpool_forward_nhwc(int n, int c, int hw, const float* x, float* y,
                                 cudaStream_t stream) {
  generic::avgpool_forward(n, c, hw, x, y, stream);
}

void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, __nv_bfloat16* dx,
                                  cudaStream_t stream) {
  generic::avgpool_backward(n, c, hw, dy, dx, stream);
}

void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, float* dx,
                                  cudaStream_t stream) {
  generic::avgpool_backward(n, c, hw, dy, dx, stream);
}

}  // namespace sweep::trainer::cuda
