/*
 * tiled_conv.h — our convolution kernels for small images with many channels (LeNet's second
 * layer: 20 channels of 12x12 into 50 filters of 5x5), forward and backward data, fp32.
 *
 * The direct kernels (direct_conv.h) give each thread one output position and read the input
 * from global memory once per filter tap; at these shapes that makes them 2.5x slower than
 * cuDNN. Here a block copies the input rows it needs for one image (every channel, zero padding
 * included) and the filters of a group of output channels into shared memory once, then each
 * thread computes 4 adjacent positions of a row for 4 filters: per filter row it loads 8 inputs
 * (two float4) and 5 float4 filter values (shared by the warp) for 80 multiply-adds. So few
 * outputs would leave each scheduler about one warp, so a block's threads also split the input
 * channels into slices, whose sums are added at the end. Sums run in a fixed order (channel,
 * filter row, filter column within a slice, then the slices in order): the same bits every run.
 * Backward data is the same kernel on the transposed problem (dy correlated with the flipped,
 * transposed filters), as in direct_conv.h. The backend times these against cuDNN and the direct
 * kernels per shape and op (cuda_direct_conv.cu).
 */
#pragma once

#include <cuda_runtime.h>

#include "trainer/backend.h"

namespace sweep::trainer::cuda {

// Whether the kernels take the shape (forward and backward data): stride 1, square 3x3 or 5x5
// filters, padding below the filter size, and a block's tiles within shared memory.
bool tiled_conv_fits(const ConvGeom& g);

// y = conv(x, w) + b (b may be null). tiled_conv_fits(g) must hold.
void tiled_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y,
                        int sm_count, cudaStream_t stream);

// dx = conv^T(dy, w). tiled_conv_fits(g) must hold.
void tiled_conv_backward_data(const ConvGeom& g, const float* w, const float* dy, float* dx,
                              int sm_count, cudaStream_t stream);

// Filter groups (of 4) per block at most; 0 (the default): as many as the shared memory holds.
// For bench_direct_conv's exploration of block shapes; set before any launch.
void tiled_conv_max_groups(int groups);
// Slices of the input channels per block at most; 0 (the default): the kernel's own choice.
void tiled_conv_max_split(int split);

}  // namespace sweep::trainer::cuda
