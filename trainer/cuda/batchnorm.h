/*
 * batchnorm.h — spatial batch normalisation on fp32 NCHW tensors, our own kernels.
 *
 * cuDNN's NCHW kernels run far below the memory's speed at the shapes of the conv-block net and
 * the ResNets, where batch norm is a large part of a step. Here
 * every kernel is a grid of (chunk, channel) blocks, each walking its chunk of the channel's
 * N*H*W values with coalesced reads; partial sums go to a small scratch in double and each block
 * combines its channel's partials itself, so there is no separate finalising launch:
 *   forward (training): sums, sums of squared deviations from the mean (a second pass, as the CPU
 *   backend: E[x^2] - E[x]^2 cancels), then y; backward: sums of dy and dy * (x - mean), then dx.
 * Every sum runs in a fixed order (no atomics), so the numbers are the same run to run. The
 * formulas and the running statistics (unbiased variance) are the CPU backend's
 * (trainer/cpu/cpu_norm.cpp), which the tests compare against.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// Floats of scratch the training forward and the backward need for g.
std::size_t batchnorm_scratch_floats(const BatchNormGeom& g);

// relu: y = max(0, bn(x)), a ReLU after the batch norm in the same pass.
void batchnorm_train(const BatchNormGeom& g, const float* x, const float* gamma, const float* beta,
                     float* running_mean, float* running_var, float* save_mean, float* save_invstd,
                     float* y, bool relu, float* scratch, cudaStream_t stream);
void batchnorm_infer(const BatchNormGeom& g, const float* x, const float* gamma, const float* beta,
                     const float* running_mean, const float* running_var, float* y, bool relu,
                     cudaStream_t stream);
// relu_y: the output of batchnorm_train with relu, whose gradient dy is (dy then passes through
// the ReLU: 0 where relu_y is not positive); null without a ReLU. dx may be dy.
void batchnorm_grad(const BatchNormGeom& g, const float* x, const float* relu_y, const float* dy,
                    const float* gamma, const float* save_mean, const float* save_invstd, float* dx,
                    float* dgamma, float* dbeta, float* scratch, cudaStream_t stream);

}  // namespace sweep::trainer::cuda
