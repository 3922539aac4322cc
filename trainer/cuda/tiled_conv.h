/*
 * tiled_conv.h — our convolution kernels that stage a whole image in shared memory: forward,
 * backward data and weight gradient, fp32, stride 1, 3x3 and 5x5 (LeNet's layers: 1 channel of
 * 28x28 into 20 filters, 20 channels of 12x12 into 50).
 *
 * The direct kernels (direct_conv.h) give each thread one output position and read the input
 * from global memory once per filter tap, which at LeNet's second layer makes them slower than
 * cuDNN. Here a block copies the filters of a group of output channels into shared memory
 * once and, for each of its images (up to four, one after another), the input rows it needs
 * (every channel, zero padding included; several loads in flight per thread, since the staging,
 * not the arithmetic, bounds these kernels' time), then each thread computes 4 adjacent positions
 * of a row for 4 filters: per filter row it loads 8 inputs (two float4) and 5 float4 filter values
 * (shared by the warp) for 80 multiply-adds. So few outputs would leave each scheduler about one
 * warp, so a block's threads also split the
 * input channels into slices, whose sums are added at the end. Backward data is the same kernel
 * on the transposed problem (dy correlated with the flipped, transposed filters), as in
 * direct_conv.h (scatter_dgrad.h computes it without the products on padding). The weight
 * gradient stages an image and its dy (the next image's copied asynchronously during this one's
 * products, where two fit in shared memory); a thread sums one filter row's weights for 4 filters
 * over a slice of the output rows (one new input and one float4 of dy per position), the slices
 * are added in the block and the blocks' image chunks by a second launch.
 * Every sum runs in a fixed order (no atomics): the same bits every run. The backend times these
 * against cuDNN and the direct kernels per shape and op and takes the fastest
 * (cuda_direct_conv.cu).
 */
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// Whether the kernels take the shape (forward and backward data): stride 1, square 3x3 or 5x5
// filters, padding below the filter size, and a block's tiles within shared memory.
bool tiled_conv_fits(const ConvGeom& g);

// y = conv(x, w) + b (b may be null). tiled_conv_fits(g) must hold.
void tiled_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y,
                        int sm_count, cudaStream_t stream);

// The forward followed by a 2x2 max pooling of stride 2 of its output (Backend::
// conv2d_forward_maxpool2x2): each block pools its outputs in shared memory, so y is never written,
// and writes the pooled values and each window's argmax byte (maxpool2x2.cuh's first_max), the
// bits of tiled_conv_forward then maxpool2x2_forward. Whether the shape takes it: tiled_conv_fits,
// even output sides, an even number of rows a block, and the blocks' shared memory with their
// output tile within half an SM's (two blocks an SM at least: LeNet's first layer always, its
// second planned for a whole GPU but not for a fused array's share, whose blocks hold all 50
// filters).
bool tiled_conv_pool_fits(const ConvGeom& g, int sm_count);
void tiled_conv_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                   const float* b, float* pooled, std::uint8_t* argmax,
                                   int sm_count, cudaStream_t stream);

// The order of the forward's and the data gradient's sums depends on their plans only through the
// channel slices (summed in slice order). These return `sm_count` where its plan slices the
// channels as the plan for `order_sm_count` does (the same bits, blocks cut for `sm_count`), else
// order_sm_count: a deterministic step plans for its share of the GPU where that keeps the order
// of a canonical plan (CudaBackend::kDeterministicShare).
int tiled_conv_forward_sms(const ConvGeom& g, int sm_count, int order_sm_count);
int tiled_conv_data_sms(const ConvGeom& g, int sm_count, int order_sm_count);

// dx = conv^T(dy, w). tiled_conv_fits(g) must hold.
void tiled_conv_backward_data(const ConvGeom& g, const float* w, const float* dy, float* dx,
                              int sm_count, cudaStream_t stream);

// The weight gradient: whether the tiled kernel takes the shape (as tiled_conv_fits, and blocks
// of at least two warps: a thread per channel and filter row for up to 128 filters, times row
// slices), the floats of scratch it needs, and dw = sum over the batch of
// x (*) dy with db = sums of dy per filter (skipped when null), summed per chunk of images and
// then over the chunks in order (direct_conv.h's sum_filter_parts).
bool tiled_conv_filter_fits(const ConvGeom& g, int sm_count);
std::size_t tiled_conv_filter_scratch(const ConvGeom& g, int sm_count);
void tiled_conv_backward_filter(const ConvGeom& g, const float* x, const float* dy, float* dw,
                                float* db, int sm_count, float* scratch, cudaStream_t stream);

// Filter groups (of 4) per block at most; 0 (the default): as many as the shared memory holds.
// For bench_direct_conv's exploration of block shapes; set before any launch.
void tiled_conv_max_groups(int groups);
// Slices of the input channels per block at most; 0 (the default): the kernel's own choice.
void tiled_conv_max_split(int split);
// Forward and backward data: images per block; 0 (the default): the plan's (about 1.5 blocks
// per SM, at most 4 images).
void tiled_conv_forward_images(int images);
// Weight gradient: images per block; 0 (the default): enough blocks for two per SM.
void tiled_conv_filter_images(int images);

}  // namespace sweep::trainer::cuda
