/*
 * gather.cuh — a mini-batch from the data set on the device (uint8 images or float features, labels
 * or regression targets): gather, normalise, augment.
 *
 * A block per sample (a block takes several, one after another, when the batch outnumbers the
 * grid). Each thread draws the sample's augmentation once (a hash, and 64-bit remainders when
 * shifting: drawn per value, with the index's 64-bit divisions, they cost more than the copy) and
 * writes its share of the sample's values with 32-bit indices. The map is an inverse map, as in
 * cpu_data.cpp: output (y, x) reads source (y - dy, x - dx), mirrored when flipped, zeros from
 * outside. The value is (raw - center) * scale + shift with __fsub_rn/__fmul_rn/__fadd_rn (the
 * factors per channel in device memory: C may be a CSV's thousands of columns) (no fused
 * multiply-add), the CPU's exact arithmetic, so batches match the CPU backend bit for bit.
 */
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/rng.h"

namespace sweep::trainer::cuda {

struct GatherArgs {
  int batch, c, h, w;
  const float* center;  // (C) on the device, or null (0): value = (raw - center) * scale + shift
  const float* scale;   // (C)
  const float* shift;   // (C)
  bool flip;
  int max_shift;
  std::uint64_t seed, step;
  int first_sample;  // GatherDesc::first_sample
};

// ------------------------------------------------------------------------------- kernels

// T: std::uint8_t pixels or float features; L: std::uint8_t labels written as int32, or float
// targets written as float.
template <class T, class L, class Y>
__global__ void gather_kernel(GatherArgs a, const T* data /* (N, C, H, W) */,
                              const L* labels /* (N) */, const std::int32_t* indices /* (batch) */,
                              float* x /* (batch, C, H, W) */, Y* y /* (batch) */,
                              const StepScalars* dyn /* (1) or null */) {
  const int plane = a.h * a.w, sample = plane * a.c;  // gather() checks sample < 2^31
  const std::uint64_t step = dyn ? dyn->step : a.step;
  if (dyn) {
    indices += dyn->index_delta;
    y += dyn->label_delta;
  }
  for (int i = blockIdx.x; i < a.batch; i += gridDim.x) {
    const std::size_t row = static_cast<std::size_t>(indices[i]);
    if (threadIdx.x == 0) y[i] = static_cast<Y>(labels[row]);
    const AugmentDraw d = augment_draw(a.seed, step, a.first_sample + i, a.flip, a.max_shift);
    const T* from = data + row * sample;
    float* to = x + std::size_t(i) * sample;
    for (int e = threadIdx.x; e < sample; e += blockDim.x) {
      const int c = e / plane, yx = e - c * plane, oy = yx / a.w, ox = yx - oy * a.w;
      const int sy = oy - d.dy, sx0 = ox - d.dx;
      float v = 0.f;
      if (sy >= 0 && sy < a.h && sx0 >= 0 && sx0 < a.w) {
        const int sx = d.flip ? a.w - 1 - sx0 : sx0;
        const float raw = float(from[c * plane + sy * a.w + sx]);
        const float centered = a.center ? __fsub_rn(raw, __ldg(a.center + c)) : raw;
        v = __fadd_rn(__fmul_rn(centered, __ldg(a.scale + c)), __ldg(a.shift + c));
      }
      to[e] = v;
    }
  }
}

// ----------------------------------------------------------------------------- launchers

template <class T, class L, class Y>
inline void gather(const GatherArgs& a, const T* data, const L* labels, const std::int32_t* indices,
                   float* x, Y* y, const StepScalars* dyn, cudaStream_t s) {
  const std::size_t sample = std::size_t(a.c) * a.h * a.w;
  if (!a.batch || !sample) return;
  if (sample >= (std::size_t{1} << 31))
    throw Error("a sample of " + std::to_string(sample) + " values is too large to gather");
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(a.batch, kMaxBlocks));
  gather_kernel<<<blocks, kThreads, 0, s>>>(a, data, labels, indices, x, y, dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
