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

// Converts each job with n > 0, in one launch (bf16_cast.cu). A transposing cast goes through
// shared memory in 32 x 32 tiles, so its reads and writes are both coalesced.
void narrow(std::initializer_list<NarrowJob> jobs, cudaStream_t stream);
void widen(std::initializer_list<WidenJob> jobs, cudaStream_t stream);

}  // namespace sweep::trainer::cuda
