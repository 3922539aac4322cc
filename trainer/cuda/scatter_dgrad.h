/*
 * scatter_dgrad.h — a convolution's data gradient without products on padding, fp32, stride 1,
 * 3x3 and 5x5 filters.
 *
 * The tiled kernel (tiled_conv.h) computes dx as the forward convolution of dy padded by R - 1 -
 * pad on every side: at LeNet's second layer (dy 8x8 into dx 12x12, 5x5 filters, no padding) 2.25
 * times the products that count are taken on that padding. Here each thread instead spreads a
 * 2x4 patch of dy positions of one image over the R x R windows they touch in dx (each dy value
 * times each of its filter's taps for one input channel: only products that count), summing over
 * the filters; the patches' windows overlap, so each thread leaves its window in shared memory and
 * the block then adds, for each dx value, the windows that cover it in a fixed order (no atomics:
 * the same bits every run). A block takes a group of up to 4 input channels of several images,
 * the filters' weights of those channels staged in shared memory once. The backend times it
 * against cuDNN and the tiled kernels (cuda_direct_conv.cu) and takes the fastest.
 */
#pragma once

#include <cuda_runtime.h>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// Whether the kernel takes the shape: stride 1, square 3x3 or 5x5 filters, padding below the
// filter size, and a block within shared memory.
bool scatter_dgrad_fits(const ConvGeom& g);

// dx = conv^T(dy, w), planned for `sm_count` multiprocessors. scatter_dgrad_fits(g) must hold.
void scatter_dgrad(const ConvGeom& g, const float* w, const float* dy, float* dx, int sm_count,
                   cudaStream_t stream);

// `sm_count` where its plan splits the filters into the slices of the plan for `order_sm_count`
// (each dx value adds the slices' windows in slice order: the same bits), else order_sm_count (see
// tiled_conv_data_sms).
int scatter_dgrad_sms(const ConvGeom& g, int sm_count, int order_sm_count);

// Images per block at most; 0 (the default): the plan's (about two blocks per SM). For the tests
// and bench_direct_conv; set before any launch.
void scatter_dgrad_max_images(int images);

}  // namespace sweep::trainer::cuda
