/*
 * gather.cuh — a mini-batch from the uint8 data set on the device: gather, normalise, augment.
 *
 * A block per sample (a block takes several, one after another, when the batch outnumbers the
 * grid). Each thread draws the sample's augmentation once (a hash, and 64-bit remainders when
 * shifting: drawn per value, with the index's 64-bit divisions, they cost more than the copy) and
 * writes its share of the sample's values with 32-bit indices. The map is an inverse map, as in
 * cpu_data.cpp: output (y, x) reads source (y - dy, x - dx), mirrored when flipped, zeros from
 * outside. The value is u8 * scale + shift with __fmul_rn/__fadd_rn (no fused multiply-add), the
 * CPU's exact arithmetic, so batches match the CPU backend bit for bit.
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
  float scale[4], shift[4];  // per channel: value = u8 * scale + shift
  bool flip;
  int max_shift;
  std::uint64_t seed, step;
  int first_sample;  // GatherDesc::first_sample
};

// ------------------------------------------------------------------------------- kernels

__global__ void gather_kernel(GatherArgs a, const std::uint8_t* images /* (N, C, H, W) */,
                              const std::uint8_t* labels /* (N) */,
                              const std::int32_t* indices /* (batch) */,
                              float* x /* (batch, C, H, W) */, std::int32_t* y /* (batch) */,
                              const StepScalars* dyn /* (1) or null */) {
  const int plane = a.h * a.w, sample = plane * a.c;  // gather() checks sample < 2^31
  const std::uint64_t step = dyn ? dyn->step : a.step;
  if (dyn) {
    indices += dyn->index_delta;
    y += dyn->label_delta;
  }
  for (int i = blockIdx.x; i < a.batch; i += gridDim.x) {
    const std::size_t row = static_cast<std::size_t>(indices[i]);
    if (threadIdx.x == 0) y[i] = labels[row];
    const AugmentDraw d = augment_draw(a.seed, step, a.first_sample + i, a.flip, a.max_shift);
    const std::uint8_t* from = images + row * sample;
    float* to = x + std::size_t(i) * sample;
    for (int e = threadIdx.x; e < sample; e += blockDim.x) {
      const int c = e / plane, yx = e - c * plane, oy = yx / a.w, ox = yx - oy * a.w;
      const int sy = oy - d.dy, sx0 = ox - d.dx;
      float v = 0.f;
      if (sy >= 0 && sy < a.h && sx0 >= 0 && sx0 < a.w) {
        const int sx = d.flip ? a.w - 1 - sx0 : sx0;
        const std::uint8_t u = from[c * plane + sy * a.w + sx];
        v = __fadd_rn(__fmul_rn(float(u), a.scale[c]), a.shift[c]);
      }
      to[e] = v;
    }
  }
}

// ----------------------------------------------------------------------------- launchers

inline void gather(const GatherArgs& a, const std::uint8_t* images, const std::uint8_t* labels,
                   const std::int32_t* indices, float* x, std::int32_t* y, const StepScalars* dyn,
                   cudaStream_t s) {
  const std::size_t sample = std::size_t(a.c) * a.h * a.w;
  if (!a.batch || !sample) return;
  if (sample >= (std::size_t{1} << 31))
    throw Error("a sample of " + std::to_string(sample) + " values is too large to gather");
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(a.batch, kMaxBlocks));
  gather_kernel<<<blocks, kThreads, 0, s>>>(a, images, labels, indices, x, y, dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
