/*
 * bf16.cuh — conversions between the fp32 NCHW tensors the backend keeps and the bfloat16 NHWC
 * copies its bf16 convolutions read and write (MathMode::bf16, see cuda_layers.cu).
 *
 * The conversion is also the layout change: cuDNN's Hopper bf16 kernels want NHWC, and given NCHW
 * they transpose before and after each call themselves (measured); a cast that has to read and
 * write every element anyway transposes at no extra pass. A filter (K, C, R, S) is converted as an
 * image batch (N = K) to (K, R, S, C), cuDNN's NHWC filter layout. Dense operands are plain
 * matrices: hw = 1 makes the same kernel a straight cast.
 *
 * A convolution needs up to three operands converted before it and two results after, and a
 * small model is launch-bound: so one launch converts a whole list (up to kMaxCasts arrays, one
 * grid row each), and widening a forward result adds the bias in the same pass. Rounding is
 * round-to-nearest-even (__float2bfloat16_rn), as PyTorch's .to(torch.bfloat16).
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"

namespace sweep::trainer::cuda {

constexpr int kMaxCasts = 3;

// One array of n images of c channels and hw pixels. n == 0: nothing to do.
struct NarrowJob {  // fp32 (n, c, hw) -> bf16 (n, hw, c)
  const float* src = nullptr;
  __nv_bfloat16* dst = nullptr;
  int n = 0, c = 1, hw = 1;
};
struct WidenJob {  // bf16 (n, hw, c) -> fp32 (n, c, hw), plus bias[c] when bias is not null
  const __nv_bfloat16* src = nullptr;
  float* dst = nullptr;
  int n = 0, c = 1, hw = 1;
  const float* bias = nullptr;
};
template <class Job>
struct CastList {
  Job job[kMaxCasts];
};

// Threads walk the destination in order (coalesced writes); reads stride by hw (narrow) or c
// (widen), which the L2 cache absorbs for the activation sizes of the models we train.
__global__ void narrow_kernel(CastList<NarrowJob> list) {
  const NarrowJob j = list.job[blockIdx.y];
  const std::size_t total = std::size_t(j.n) * j.c * j.hw;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t ci = o % j.c, rest = o / j.c, p = rest % j.hw, ni = rest / j.hw;
    j.dst[o] = __float2bfloat16_rn(j.src[(ni * j.c + ci) * j.hw + p]);
  }
}

__global__ void widen_kernel(CastList<WidenJob> list) {
  const WidenJob j = list.job[blockIdx.y];
  const std::size_t total = std::size_t(j.n) * j.c * j.hw;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t p = o % j.hw, rest = o / j.hw, ci = rest % j.c, ni = rest / j.c;
    const float v = __bfloat162float(j.src[(ni * j.hw + p) * j.c + ci]);
    j.dst[o] = j.bias ? v + j.bias[ci] : v;
  }
}

// Converts each job with n > 0; one launch for the whole list.
template <class Job, class Kernel>
void launch_casts(Kernel kernel, std::initializer_list<Job> jobs, cudaStream_t stream) {
  if (jobs.size() > std::size_t(kMaxCasts)) throw Error("cuda: more casts than one launch takes");
  CastList<Job> list{};
  int count = 0;
  std::size_t largest = 0;
  for (const Job& j : jobs) {
    if (j.n == 0) continue;
    list.job[count++] = j;
    const std::size_t size = std::size_t(j.n) * j.c * j.hw;
    largest = largest > size ? largest : size;
  }
  if (count == 0) return;
  kernel<<<dim3(grid_for(largest), count), kThreads, 0, stream>>>(list);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

inline void narrow(std::initializer_list<NarrowJob> jobs, cudaStream_t stream) {
  launch_casts(narrow_kernel, jobs, stream);
}
inline void widen(std::initializer_list<WidenJob> jobs, cudaStream_t stream) {
  launch_casts(widen_kernel, jobs, stream);
}

}  // namespace sweep::trainer::cuda
