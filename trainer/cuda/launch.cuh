/*
 * launch.cuh — launch geometry shared by the kernel families, and the per-step scalars a captured
 * CUDA graph reads at replay time.
 *
 * Elementwise kernels use grid-stride loops over a grid capped at a few waves of the GPU: one
 * launch shape works for any n, and small tensors (most of a small model's) get one short wave.
 */
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sweep::trainer::cuda {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 132 * 8;  // 8 waves of one block per H100 multiprocessor
constexpr int kSumSquaresBlocks = 264;       // sum_squares partials: a scratch of this many doubles

inline unsigned grid_for(std::size_t n, int threads = kThreads) {
  const std::size_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, kMaxBlocks));
}

// What changes from one training step to the next. In an eager step these travel as kernel
// arguments; in a captured step the optimizer and gather kernels read them from this block in
// device memory instead (see CudaBackend::set_step_scalars), so one graph serves every step.
struct StepScalars {
  float lr;                 // learning rate of this step
  float adam_step;          // lr / (1 - beta1^t)
  float adam_inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
  float pad_;
  std::uint64_t step;        // augmentation step counter (GatherDesc::step)
  std::int64_t index_delta;  // rows to add to the captured GatherDesc::indices pointer
  // Rows to add to the captured label arrays (gather's labels out, the loss's labels in, argmax's
  // predictions out): 0 for the training step, which reuses one batch's labels; an evaluation
  // pass's batch b writes its rows of arrays that cover the whole set.
  std::int64_t label_delta;
};

}  // namespace sweep::trainer::cuda
