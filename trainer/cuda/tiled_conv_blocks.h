/*
 * tiled_conv_blocks.h — what the tiled convolution's two kernels (tiled_conv_forward.cu: forward
 * and data gradient; tiled_conv_filter.cu: weight gradient) plan their blocks with: filters per
 * thread, the threads a block may have and aims at, and the limit on filter groups a block that
 * tiled_conv_max_groups sets for both.
 */
#pragma once

namespace sweep::trainer::cuda::tiled {

constexpr int kKt = 4;  // filters per thread (one float4 of each filter tap)
constexpr int kMaxThreads = 512;
constexpr int kTargetThreads = 256;  // threads a block's channel slices add up to, about
inline int max_groups = 0;           // tiled_conv_max_groups

}  // namespace sweep::trainer::cuda::tiled
