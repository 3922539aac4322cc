/*
 * nhwc_cast.cuh — conversions between the fp32 NCHW tensors the backend keeps and the
 * channels-last copies its graph-API convolutions read and write: bfloat16 NHWC (MathMode::bf16)
 * or fp32 NHWC (MathMode::tf32), see cuda_conv_nhwc.cu and cuda_dense.cu.
 *
 * The conversion is also the layout change: cuDNN's Hopper tensor-core kernels want NHWC, and
 * given NCHW they transpose before and after each call themselves (measured); a cast that has to
 * read and write every element anyway transposes at no extra pass (fp32: the transpose alone). A
 * filter (K, C, R, S) is converted as an image batch (N = K) to (K, R, S, C), cuDNN's NHWC filter
 * layout. Dense operands are plain matrices: hw = 1 makes the same kernel a straight cast.
 *
 * A convolution needs up to three operands converted before it and two results after, and a
 * small model is launch-bound: so one launch converts a whole list (up to kMaxCasts arrays, one
 * grid row each), and converting a forward result back adds the bias in the same pass. Rounding to
 * bf16 is round-to-nearest-even (__float2bfloat16_rn), as PyTorch's .to(torch.bfloat16).
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <initializer_list>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// f(T{}) with T the element type of channels-last storage s: __nv_bfloat16 for bf16_nhwc, float
// for fp32_nhwc. The one place a Storage becomes a device type.
template <class F>
void with_nhwc_type(Storage s, F&& f) {
  if (is_bf16(s))
    f(__nv_bfloat16{});
  else
    f(float{});
}

constexpr int kMaxCasts = 3;

// One array of n images of c channels and hw pixels. n == 0: nothing to do. T: the channels-last
// element type, __nv_bfloat16 or float.
template <class T>
struct ToNhwc {  // fp32 (n, c, hw) -> T (n, hw, c)
  const float* src = nullptr;
  T* dst = nullptr;
  int n = 0, c = 1, hw = 1;
};
template <class T>
struct ToNchw {  // T (n, hw, c) -> fp32 (n, c, hw), plus bias[c] when bias is not null
  const T* src = nullptr;
  float* dst = nullptr;
  int n = 0, c = 1, hw = 1;
  const float* bias = nullptr;
};
template <class Job>
struct CastList {
  Job job[kMaxCasts];
};

// Converts each job with n > 0, in one launch (nhwc_cast.cu; T: __nv_bfloat16 or float). A
// transposing cast goes through shared memory in 32 x 32 tiles, so its reads and writes are both
// coalesced.
template <class T>
void to_nhwc(std::initializer_list<ToNhwc<T>> jobs, cudaStream_t stream);
template <class T>
void to_nchw(std::initializer_list<ToNchw<T>> jobs, cudaStream_t stream);

}  // namespace sweep::trainer::cuda
