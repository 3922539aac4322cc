/*
 * direct_conv.h — our own kernels for small convolutions: stride 1, square 3x3 or 5x5 filters,
 * any zero padding, fp32. At LeNet's shapes cuDNN's picks leave most of the GPU idle (its weight
 * gradient of the first layer, one input channel, is several times slower than a direct kernel:
 * bench/RESULTS.md), and these shapes are what a fused array of small trials is made of.
 * The backend times them against cuDNN's plan per shape and takes the faster (cuda_direct_conv.cu).
 *
 * Every sum runs in a fixed order (no atomics): the same inputs give the same bits in every run.
 *  - forward: y = conv(x, w) + b in one launch (the bias needs no launch of its own). Each thread
 *    computes one output position for KT filters whose weights sit in shared memory, so every
 *    input value it loads serves KT products.
 *  - backward data: the same kernel on the transposed problem (dy correlated with the filters
 *    flipped and transposed as they are loaded into shared memory; padding R - 1 - pad).
 *  - backward filter: one block per (filter, input channel) and part of the output positions, R*R
 *    sums per thread reduced across the block, the parts then summed in order by a second launch
 *    (skipped when one part covers them); the bias gradient rides along in the blocks of input
 *    channel 0.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// The shapes our convolution kernels (these, tiled_conv.h, scatter_dgrad.h) take at all: stride
// 1, square 3x3 or 5x5 filters, padding below the filter size, the output size those give, and
// tensors of fewer than 2^31 values (the kernels count positions in int).
bool small_conv_shape(const ConvGeom& g);

// Whether these kernels take the shape: small_conv_shape, and both directions' filter tiles within
// one block's shared memory.
bool direct_conv_fits(const ConvGeom& g);

// y = conv(x, w) + b (b may be null). direct_conv_fits(g) must hold.
void direct_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                         float* y, cudaStream_t stream);

// dx = conv^T(dy, w). direct_conv_fits(g) must hold.
void direct_conv_backward_data(const ConvGeom& g, const float* w, const float* dy, float* dx,
                               cudaStream_t stream);

// Parts the weight gradient's positions are split into: enough blocks to cover the GPU twice.
int direct_conv_filter_parts(const ConvGeom& g, int sm_count);

// Floats of scratch direct_conv_backward_filter needs for `parts` (0 when parts == 1).
std::size_t direct_conv_filter_scratch(const ConvGeom& g, int parts);

// dw = sum over the batch of x (*) dy, and db = sums of dy per filter (skipped when null).
// `scratch` holds direct_conv_filter_scratch(g, parts) floats.
void direct_conv_backward_filter(const ConvGeom& g, const float* x, const float* dy, float* dw,
                                 float* db, int parts, float* scratch, cudaStream_t stream);

// dw (K*C*RR) and db (K, skipped when null) as the in-order sums of a weight gradient's part
// sums, laid out (K*C, parts, RR) and (K, parts). Shared by the direct and tiled kernels.
void sum_filter_parts(const float* dw_parts, const float* db_parts, float* dw, float* db,
                      int filters, int channels, int rr, int parts, cudaStream_t stream);

}  // namespace sweep::trainer::cuda
