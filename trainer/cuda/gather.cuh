/*
 * gather.cuh — a mini-batch from the uint8 data set on the device: gather, normalise, augment.
 *
 * One thread per output value, each recomputing its sample's draw (a few integer multiplies):
 * cheaper than a second launch or a shared-memory pass, and it keeps the map an inverse map, as
 * in cpu_data.cpp: output (y, x) reads source (y - dy, x - dx), mirrored when flipped, zeros from
 * outside. The value is u8 * scale + shift with __fmul_rn/__fadd_rn (no fused multiply-add), the
 * CPU's exact arithmetic, so batches match the CPU backend bit for bit.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

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
  const std::size_t plane = std::size_t(a.h) * a.w, sample = plane * a.c;
  const std::size_t total = sample * a.batch;
  const std::uint64_t step = dyn ? dyn->step : a.step;
  if (dyn) {
    indices += dyn->index_delta;
    y += dyn->label_delta;
  }
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const int i = static_cast<int>(o / sample);
    const std::size_t within = o % sample;
    const int c = static_cast<int>(within / plane);
    const int oy = static_cast<int>((within % plane) / a.w), ox = static_cast<int>(within % a.w);
    const std::size_t row = static_cast<std::size_t>(indices[i]);
    if (within == 0) y[i] = labels[row];
    const AugmentDraw d = augment_draw(a.seed, step, a.first_sample + i, a.flip, a.max_shift);
    const int sy = oy - d.dy, sx0 = ox - d.dx;
    float v = 0.f;
    if (sy >= 0 && sy < a.h && sx0 >= 0 && sx0 < a.w) {
      const int sx = d.flip ? a.w - 1 - sx0 : sx0;
      const std::uint8_t u = images[row * sample + c * plane + std::size_t(sy) * a.w + sx];
      v = __fadd_rn(__fmul_rn(float(u), a.scale[c]), a.shift[c]);
    }
    x[o] = v;
  }
}

// ----------------------------------------------------------------------------- launchers

inline void gather(const GatherArgs& a, const std::uint8_t* images, const std::uint8_t* labels,
                   const std::int32_t* indices, float* x, std::int32_t* y, const StepScalars* dyn,
                   cudaStream_t s) {
  const std::size_t total = std::size_t(a.batch) * a.c * a.h * a.w;
  if (!total) return;
  gather_kernel<<<grid_for(total), kThreads, 0, s>>>(a, images, labels, indices, x, y, dyn);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
