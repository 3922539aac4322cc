/*
 * nhwc_activations.h — batch norm, ReLU, residual add, pooling and convolution bias on NHWC
 * activations ((n, hw, c), channels contiguous; element (ni, p, ci) at (ni * hw + p) * c + ci) of
 * either element type: bfloat16 or fp32. Every function has an overload for each.
 *
 * Why: cuDNN's tensor-core convolutions run channels-last, so a network converting every
 * activation to NCHW between its convolutions pays transposes on each; in bf16 it also converts to
 * fp32, most of its step in casts (bf16.cuh), and fp32 passes twice the bytes. These kernels let
 * the tensors stay NHWC from one convolution to the next: bf16 in bf16 mode, fp32 in tf32 mode.
 * Each op is the math of its fp32 NCHW counterpart (batchnorm.h, elementwise.cuh, maxpool2x2.cuh,
 * the CPU backend's pooling): inputs widened to float exactly, parameters, statistics and
 * arithmetic in fp32 (batch-norm partial sums in double); each bf16 output rounded once to nearest
 * even (__float2bfloat16_rn), each fp32 output stored as computed.
 *
 * Batch norm in NHWC puts consecutive threads on consecutive channels (coalesced) and blocks on
 * chunks of the n * hw pixel rows; each block writes per-channel partials (double) to the scratch
 * and a small launch adds each channel's partials. Every sum runs in an order fixed by the shape
 * alone (no atomics; not the pointers, not the GPU, not the element type), so the numbers are the
 * same run to run, and fp32 inputs holding bf16 values give the bf16 overload's sums and
 * statistics. Nothing here allocates: the launchers can be captured in a CUDA graph. Sizes of
 * 2^31 elements or more throw sweep::Error (the index arithmetic is 32-bit), as bf16_cast.cu does.
 *
 * Defined one family a file: nhwc_batchnorm.cu, nhwc_conv_bias.cu (add_bias_nhwc and
 * channel_sums_nhwc), nhwc_elementwise.cu (ReLU, add) and nhwc_pool.cu; what they share is in
 * nhwc_pack.cuh (packed loads and stores) and nhwc_reduce.cuh (the per-channel sums).
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// Floats of scratch batchnorm_train_nhwc and batchnorm_grad_nhwc need for g (g.hw: pixels per
// image), either type. The scratch holds doubles: 16-byte aligned, as cudaMalloc's.
std::size_t batchnorm_nhwc_scratch_floats(const BatchNormGeom& g);

// relu: y = max(0, bn(x)) in the same pass. save_mean, save_invstd: (c) fp32. The formulas and
// the running statistics (unbiased variance) are batchnorm_train's.
void batchnorm_train_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, __nv_bfloat16* y, bool relu,
                          float* scratch, cudaStream_t stream);
void batchnorm_train_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, float* y, bool relu, float* scratch,
                          cudaStream_t stream);
void batchnorm_infer_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          __nv_bfloat16* y, bool relu, cudaStream_t stream);
void batchnorm_infer_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          float* y, bool relu, cudaStream_t stream);
// relu_y: the output of batchnorm_train_nhwc with relu (dy then passes through that ReLU first: 0
// where relu_y is not positive); null without a ReLU. dx may be dy. dgamma, dbeta (fp32) are
// overwritten.
void batchnorm_grad_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x,
                         const __nv_bfloat16* relu_y, const __nv_bfloat16* dy, const float* gamma,
                         const float* save_mean, const float* save_invstd, __nv_bfloat16* dx,
                         float* dgamma, float* dbeta, float* scratch, cudaStream_t stream);
void batchnorm_grad_nhwc(const BatchNormGeom& g, const float* x, const float* relu_y,
                         const float* dy, const float* gamma, const float* save_mean,
                         const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                         float* scratch, cudaStream_t stream);

// A convolution's bias on its NHWC output, rows (n * hw) x k: y[r, k] += bias[k], the sum in fp32
// (rounded once for bf16).
void add_bias_nhwc(__nv_bfloat16* y, const float* bias, std::size_t rows, int k,
                   cudaStream_t stream);
void add_bias_nhwc(float* y, const float* bias, std::size_t rows, int k, cudaStream_t stream);
// Its gradient: db[k] = the sum over rows of dy[r, k] (fp32, overwritten; 0 when rows is 0),
// partial sums in double through the scratch (either type) and combined as batch norm's, in an
// order fixed by (rows, k): the bits of batchnorm_grad_nhwc's dbeta for the same dy without a
// ReLU. The scratch holds doubles: 16-byte aligned, as cudaMalloc's.
std::size_t channel_sums_nhwc_scratch_floats(std::size_t rows, int k);
void channel_sums_nhwc(const __nv_bfloat16* dy, float* db, std::size_t rows, int k, float* scratch,
                       cudaStream_t stream);
void channel_sums_nhwc(const float* dy, float* db, std::size_t rows, int k, float* scratch,
                       cudaStream_t stream);

// Elementwise over n values (any layout). The output may be an input.
void relu_forward_nhwc(const __nv_bfloat16* x, __nv_bfloat16* y, std::size_t n,
                       cudaStream_t stream);
void relu_forward_nhwc(const float* x, float* y, std::size_t n, cudaStream_t stream);
// dx = y > 0 ? dy : 0.
void relu_backward_nhwc(const __nv_bfloat16* y, const __nv_bfloat16* dy, __nv_bfloat16* dx,
                        std::size_t n, cudaStream_t stream);
void relu_backward_nhwc(const float* y, const float* dy, float* dx, std::size_t n,
                        cudaStream_t stream);
// y = a + b (relu: max(0, a + b)), the sum in fp32 (rounded once for bf16).
void add_nhwc(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* y, std::size_t n,
              bool relu, cudaStream_t stream);
void add_nhwc(const float* a, const float* b, float* y, std::size_t n, bool relu,
              cudaStream_t stream);

// 2x2 windows, stride 2, no padding: x (n, h, w, c) -> y (n, h / 2, w / 2, c).
void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x, __nv_bfloat16* y,
                             cudaStream_t stream);
void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const float* x, float* y,
                             cudaStream_t stream);
// dx fully written: each window's dy goes to its first maximum (row-major), as the fp32 kernel;
// every other element, and a trailing odd row or column, gets 0.
void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x,
                              const __nv_bfloat16* y, const __nv_bfloat16* dy, __nv_bfloat16* dx,
                              cudaStream_t stream);
void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const float* x, const float* y,
                              const float* dy, float* dx, cudaStream_t stream);

// Global average pool: x (n, hw, c) -> y fp32 (n, c), as the CPU backend's average over a full
// window: the sum in fp32 in pixel order, times 1.f / hw. Backward: dx (n, hw, c) =
// dy (n, c) * (1.f / hw) (rounded for bf16).
void global_avgpool_forward_nhwc(int n, int c, int hw, const __nv_bfloat16* x, float* y,
                                 cudaStream_t stream);
void global_avgpool_forward_nhwc(int n, int c, int hw, const float* x, float* y,
                                 cudaStream_t stream);
void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, __nv_bfloat16* dx,
                                  cudaStream_t stream);
void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, float* dx,
                                  cudaStream_t stream);

}  // namespace sweep::trainer::cuda
