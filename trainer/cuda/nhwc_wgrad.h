/*
 * nhwc_wgrad.h — our TF32 weight gradient for 3x3 convolutions on fp32 NHWC activations.
 *
 * Why: at 32 channels of 32x32 (the conv-block net's first stage) every weight-gradient engine
 * cuDNN offers for fp32 NHWC is an FMA kernel (wgrad_alg0_engine_NHWC) or a much slower
 * tensor-core one: the result is only K x 9C values, too few tiles
 * to fill the GPU, while the reduction runs over all N*H*W positions. This kernel splits that
 * reduction instead: a block per image (or half image, or a few small images) stages their rows in
 * shared memory (x with its zero border, dy) and accumulates all nine taps' K x C products on
 * tensor cores (WMMA, TF32 inputs, fp32 accumulation), writing one partial; a second launch adds
 * the partials in order into the K,C,R,S gradient. Every sum runs in a fixed order (no atomics):
 * the same bits every run.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// Whether the kernel takes the shape: 3x3, stride 1, padding 1, channels and filters in multiples
// of 16, rows of at most 64 positions. A block computes up to 8 tiles of 16 x 16 (a warp's
// accumulators per tap): all of K x C up to 2048, tiles of 32 x 64 or 64 x 32 beyond.
bool nhwc_wgrad_fits(const ConvGeom& g);
// Floats of scratch it needs: one partial (9 K C) per block of images and row part.
std::size_t nhwc_wgrad_scratch_floats(const ConvGeom& g);
// dw (K, C, 3, 3), fp32, overwritten = sum over the batch of x (*) dy, x (n, h, w, c) and dy
// (n, h, w, k) fp32 NHWC, the products in TF32. nhwc_wgrad_fits(g) must hold.
void nhwc_wgrad(const ConvGeom& g, const float* x, const float* dy, float* dw, float* scratch,
                cudaStream_t stream);

}  // namespace sweep::trainer::cuda
