/*
 * nhwc_reduce.cuh — the per-channel sums over the rows (n * hw pixels) of an NHWC tensor that
 * batch norm's statistics and gradient (nhwc_batchnorm.cu) and a convolution's bias gradient
 * (nhwc_conv_bias.cu) share: how the rows and channels split over blocks (BnShape), a thread's
 * walk over its rows, the block's partial sums in double, and the combine launch that adds each
 * channel's partials in a fixed order.
 *
 * A thread takes a channel pair (4 bytes in bf16, where a pair per thread keeps a warp on whole
 * cache lines while leaving enough blocks); fp32 keeps the pair (8 bytes: a warp's row is two whole
 * lines) rather than one channel of 4 bytes, so the split over blocks, and with it the scratch and
 * every sum's order, is the same for both types. Loops read a batch of rows before using any of
 * them, so a thread's loads overlap even where an output may alias an input.
 */
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_pack.cuh"

namespace sweep::trainer::cuda::nhwc {

// How the rows (n * hw pixels) x c channels split over blocks. A block is tx x ty threads: tx
// across the channels, P (pack) channels each, ty lanes across the rows; the grid is tiles (across
// the channels) x chunks (of per rows). A lane sums its channels over rows first, first + ty, ...
// of its chunk in float, the block adds its lanes in lane order in double, and a combine launch
// adds the chunks in a fixed order. All of it follows from (n, hw, c) alone, not from the pointers
// or the GPU, so every sum's order, and the result's bits, depend on the shape only.
struct BnShape {
  unsigned rows, c;
  unsigned pack;    // channels per thread: 2 when c is even, else 1 (either type)
  unsigned tx, ty;  // tx * ty == kThreads
  unsigned tiles, chunks, per;
};

constexpr unsigned kMinLaneRows = 4;   // rows a lane sums at least (when there are enough)
constexpr unsigned kMaxChunks = 1024;  // bounds the combine's reads: 8 partials per thread
// The combine's block: kCombineChannels channels (a 128-byte line of partials per chunk) by
// kCombineLanes lanes across the chunks, the lanes added as a tree: narrow blocks give several
// blocks for a few channels, and the tree is shorter than adding the lanes in turn.
constexpr unsigned kCombineChannels = 8, kCombineLanes = 128;
// Rows a thread loads before using any: a lane has some 20 rows, and each batch is a round trip
// to memory. The gradient's kernels load three arrays per row (registers allow 4).
constexpr int kBatch = 8, kGradBatch = 4;
// Blocks of the streaming kernels resident per multiprocessor (registers capped to fit, 40: the
// gradient's kernels spill at 32), and the blocks a grid aims at: one wave of them on an H100's
// 132 multiprocessors, with no tail of a few late blocks. A constant, not the GPU's count: the
// split, and so the sums' order, must not depend on the GPU.
constexpr int kBnBlocksPerSm = 6;
constexpr unsigned kBnTargetBlocks = 132 * kBnBlocksPerSm;

inline BnShape bn_shape(unsigned rows, unsigned c) {
  BnShape s{};
  s.rows = rows;
  s.c = std::max(c, 1u);
  s.pack = s.c % 2 == 0 ? 2 : 1;
  const unsigned groups = s.c / s.pack;
  s.tx = 1;
  while (s.tx < groups && s.tx < 32) s.tx *= 2;
  s.ty = kThreads / s.tx;
  s.tiles = (groups + s.tx - 1) / s.tx;
  // About kBnTargetBlocks blocks, fewer when the lanes would get under kMinLaneRows rows each.
  const unsigned by_blocks = (kBnTargetBlocks + s.tiles - 1) / s.tiles;
  const unsigned by_rows = s.rows / (s.ty * kMinLaneRows);
  const unsigned chunks = std::clamp(std::min(by_blocks, by_rows), 1u, kMaxChunks);
  s.per = std::max(1u, (s.rows + chunks - 1) / chunks);
  s.chunks = std::max(1u, (s.rows + s.per - 1) / s.per);
  return s;
}

inline BnShape bn_shape(const BatchNormGeom& g) {
  return bn_shape(unsigned(g.n) * unsigned(g.hw), unsigned(std::max(g.c, 1)));
}

// The thread's share of its block: rows first, first + ty, ... below end, channels c0 .. c0 + P
// - 1 (none where c0 >= c: the idle end of the last tile; with P = 2, c is even, so c0 + 1 < c).
struct Walk {
  unsigned first, end, c0;
  bool active;
};

template <int P>
__device__ Walk walk_of(const BnShape& s) {
  const unsigned r0 = blockIdx.y * s.per;
  const unsigned c0 = (blockIdx.x * s.tx + threadIdx.x) * P;
  return {r0 + threadIdx.y, min(s.rows, r0 + s.per), c0, c0 < s.c};
}

// Loads channels c0.. of rows r, r + ty, ... (B of them; 0 for those from end on) into v: a
// batch's loads are all issued before any of its values is used.
template <int P, bool kVec, class T, int B>
__device__ __forceinline__ void load_rows(const T* p, const BnShape& s, const Walk& w, unsigned r,
                                          float (&v)[B][P]) {
#pragma unroll
  for (int u = 0; u < B; ++u) {
    const unsigned ru = r + u * s.ty;
    if (ru < w.end) {
      load_n<P, kVec>(p + ru * s.c + w.c0, v[u]);
    } else {
#pragma unroll
      for (int j = 0; j < P; ++j) v[u][j] = 0.f;
    }
  }
}

// Adds the block's lanes (a thread's a and b per channel) in lane order, in double, and writes the
// block's sums to partials[chunk][channel]. Every thread of the block must call it.
template <int P>
__device__ void write_partials(const float (&a)[P], const float (&b)[P], const BnShape& s,
                               double2* __restrict__ partials) {
  __shared__ double2 lanes[2 * kThreads];  // [lane][the tile's channel]; P <= 2
  const unsigned cols = s.tx * P;
#pragma unroll
  for (int j = 0; j < P; ++j)
    lanes[threadIdx.y * cols + threadIdx.x * P + j] = make_double2(a[j], b[j]);
  __syncthreads();
  const unsigned t = threadIdx.y * s.tx + threadIdx.x, ch = blockIdx.x * cols + t;
  if (t >= cols || ch >= s.c) return;
  double2 sum{0, 0};
  for (unsigned l = 0; l < s.ty; ++l) {
    sum.x += lanes[l * cols + t].x;
    sum.y += lanes[l * cols + t].y;
  }
  partials[std::size_t(blockIdx.y) * s.c + ch] = sum;
}

// The channel's totals over the chunks, to the threads with threadIdx.y == 0. Lane l adds chunks
// l, l + kCombineLanes, ... in turn; the lanes are then added as a tree of fixed shape. Every
// thread of the block must call it.
__device__ inline double2 combine(const double2* __restrict__ partials, const BnShape& s,
                                  unsigned ch) {
  __shared__ double2 lanes[kCombineLanes][kCombineChannels];
  double2 t{0, 0};
  if (ch < s.c) {
#pragma unroll 4
    for (unsigned k = threadIdx.y; k < s.chunks; k += kCombineLanes) {
      const double2 p = partials[std::size_t(k) * s.c + ch];
      t.x += p.x;
      t.y += p.y;
    }
  }
  lanes[threadIdx.y][threadIdx.x] = t;
  for (unsigned half = kCombineLanes / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.y < half) {
      t.x += lanes[threadIdx.y + half][threadIdx.x].x;
      t.y += lanes[threadIdx.y + half][threadIdx.x].y;
      lanes[threadIdx.y][threadIdx.x] = t;
    }
  }
  return t;
}

// Calls f(j, value) for each value of x this thread walks (channel j of its P), a batch of rows
// loaded before any is used.
template <int P, bool kVec, class T, class F>
__device__ __forceinline__ void for_each_value(const T* x, const BnShape& s, const Walk& w, F&& f) {
  for (unsigned r = w.first; r < w.end; r += kBatch * s.ty) {
    float v[kBatch][P];
    load_rows<P, kVec>(x, s, w, r, v);
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (r + u * s.ty < w.end) {
#pragma unroll
        for (int j = 0; j < P; ++j) f(j, v[u][j]);
      }
  }
}

// Whether every pointer (null included) allows a channel pair of T as one access.
template <class T, class... Ptr>
bool pair_aligned(Ptr... ptrs) {
  return (aligned(ptrs, 2 * sizeof(T)) && ...);
}

// Calls launch(integral_constant<int, P>, bool_constant<kVec>) for s's kernel variant: channel
// pairs as one access (4 bytes in bf16, 8 in fp32) where every pointer allows them (pair_aligned),
// else as two (the same sums either way), or single channels when c is odd.
template <class Launch>
void by_variant(const BnShape& s, bool pair_ok, Launch&& launch) {
  if (s.pack == 1)
    launch(std::integral_constant<int, 1>{}, std::false_type{});
  else if (pair_ok)
    launch(std::integral_constant<int, 2>{}, std::true_type{});
  else
    launch(std::integral_constant<int, 2>{}, std::false_type{});
}

inline dim3 grid_of(const BnShape& s) { return dim3(s.tiles, s.chunks); }
inline dim3 block_of(const BnShape& s) { return dim3(s.tx, s.ty); }
inline dim3 combine_grid(const BnShape& s) {
  return dim3((s.c + kCombineChannels - 1) / kCombineChannels);
}
inline dim3 combine_block() { return dim3(kCombineChannels, kCombineLanes); }

}  // namespace sweep::trainer::cuda::nhwc
