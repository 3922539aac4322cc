/*
 * staging.cuh — what our shared-memory kernels (tiled_conv_forward.cu, tiled_conv_filter.cu,
 * scatter_dgrad.cu) share: copying values into shared memory with several loads in flight,
 * splitting indices without integer division, copying asynchronously (the next image's tiles
 * arriving during the products on this one's), and allowing a kernel more than 48 KB of dynamic
 * shared memory on each device.
 */
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <set>

#include "common/check.h"

namespace sweep::trainer::cuda {

// The dynamic shared memory our kernels plan with at most (of the H100's 227 KB per block).
constexpr std::size_t kMaxSharedBytes = 200 << 10;

// Shared-memory staging: value e of `count` (e = threadIdx.x, + blockDim.x, ...) read by
// load(e) and written by store(e, v), kInFlight loads issued before their stores. A loop that
// stores each value before loading the next waits out one L2 latency per value, and at these
// sizes that waiting, not the arithmetic, set the kernels' time.
constexpr int kInFlight = 4;
template <class Load, class Store>
__device__ void stage(int count, Load&& load, Store&& store) {
  for (int base = threadIdx.x; base < count; base += kInFlight * blockDim.x) {
    float v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int e = base + u * int(blockDim.x);
      v[u] = e < count ? load(e) : 0.f;
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int e = base + u * int(blockDim.x);
      if (e < count) store(e, v[u]);
    }
  }
}

// Asynchronous staging (cp.async): value e of `count` (e = threadIdx.x, + blockDim.x, ...) copied
// from src(e), a global float or nullptr for a zero (`any`: a valid global address that is then
// not read), to dst(e) in shared memory, without waiting and without registers. The caller
// commits the copies (__pipeline_commit) and waits for them (__pipeline_wait_prior, then a
// barrier) before reading them; meanwhile the block computes on what it staged before.
template <class Src, class Dst>
__device__ void stage_async(int count, const float* any, Src&& src, Dst&& dst) {
  for (int e = threadIdx.x; e < count; e += blockDim.x) {
    const float* from = src(e);
    __pipeline_memcpy_async(dst(e), from ? from : any, sizeof(float), from ? 0 : sizeof(float));
  }
}

// e / d for 0 <= e < 2^21 in a few float instructions instead of an integer division's twenty
// (the staging loops split each value's index by runtime sizes): the quotient of e + 0.5 lies at
// least 0.5 / d from an integer, and the float error of (e + 0.5) * (1 / d) stays below
// e / d * 2^-23, which is smaller for e < 2^21. A block's tiles hold under 2^16 floats.
struct FastDiv {
  int d;
  float inv;
  __device__ explicit FastDiv(int divisor) : d(divisor), inv(1.f / float(divisor)) {}
  __device__ int operator()(int e) const { return __float2int_rz((float(e) + 0.5f) * inv); }
};

// Above 48 KB a kernel's dynamic shared memory must be allowed explicitly, once per kernel and
// device: each device loads its own copy of the kernel, so an allowance made on the first GPU does
// not hold on the second (a data-parallel trial's second replica failed its launches so).
template <auto Kernel>
void allow_shared_memory() {
  static std::mutex mutex;
  static std::set<int> devices;  // where this kernel has been allowed
  int device = 0;
  SWEEP_CHECK_CUDA(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  if (devices.count(device)) return;
  SWEEP_CHECK_CUDA(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(kMaxSharedBytes)));
  devices.insert(device);
}

}  // namespace sweep::trainer::cuda
