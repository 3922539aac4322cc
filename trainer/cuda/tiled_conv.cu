/*
 * tiled_conv.cu — the tiled convolution kernel of tiled_conv.h, its block plan and launches.
 */
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/maxpool2x2.cuh"
#include "trainer/cuda/staging.cuh"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::cuda {

namespace {

constexpr int kPx = 4;  // adjacent output positions of a row per thread
constexpr int kKt = 4;  // filters per thread (one float4 of each filter tap)
constexpr int kMaxThreads = 512;
constexpr int kTargetThreads = 256;  // threads a block's channel slices add up to, about
constexpr int kMaxSplit = 8;
int max_groups = 0;      // tiled_conv_max_groups
int max_split = 0;       // tiled_conv_max_split
int forward_images = 0;  // tiled_conv_forward_images
int filter_images = 0;   // tiled_conv_filter_images

// in (N, C, H, W) correlated with (K, C, R, R) filters, padding (pad_h, pad_w), gives out
// (N, K, OH, OW); a block covers `rows` output rows of one image for `kb` filters.
struct Tiled {
  int n, c, h, w, k, oh, ow, pad_h, pad_w;
  int kb, rows, segs, sw, sh;  // filters per block, output rows per block, row segments,
                               // shared input row width (a multiple of 4) and rows
  int split;                   // slices of the input channels, summed at the end in order
  int nb;                      // images per block, one after another (the filters staged once)
  int nblocks, kblocks, zblocks, threads;
  std::size_t smem;     // bytes
  std::size_t pool_at;  // the pooled forward's output tile, in floats from the start (plan_pooled)
};

// Plans the blocks; false when they cannot fit in shared memory.
bool plan(Tiled& t, int r, int sm_count) {
  const int groups =
      max_groups > 0 ? std::min(max_groups, (t.k + kKt - 1) / kKt) : (t.k + kKt - 1) / kKt;
  t.segs = (t.ow + kPx - 1) / kPx;
  // A thread reads kPx + r - 1 <= 8 inputs of a row as two float4: rows padded to 4 floats.
  t.sw = (t.segs * kPx + r - 1 + 3) / 4 * 4;
  // Filter groups per block: the most that still give the GPU about 1.5 blocks per SM (fewer
  // groups per block make more blocks, each reading the image again; at LeNet's second layer,
  // batch 64, 4 groups of its 13 ran 17.6 us against 27.9 us for all 13, and at batch 256 all 13
  // were fastest).
  int first = groups;
  while (first > 1 &&
         std::size_t(t.n) * ((groups + first - 1) / first) * 2 < std::size_t(sm_count) * 3)
    --first;
  if (std::size_t(t.n) * ((groups + first - 1) / first) * 2 < std::size_t(sm_count) * 3)
    first = groups;  // no split fills the GPU: keep one filter block, split the rows instead
  for (int g = first;; g = (g + 1) / 2) {
    t.kb = g * kKt;
    t.kblocks = (t.k + t.kb - 1) / t.kb;
    // Split an image's rows among blocks (z) until the blocks fill the GPU and each has at most
    // kMaxThreads threads; rows only shrink as z grows, so this ends.
    const auto split = [&](int z) {
      t.rows = (t.oh + z - 1) / z;
      t.zblocks = (t.oh + t.rows - 1) / t.rows;
    };
    int z = 1;
    split(z);
    while (z < t.oh &&
           ((std::size_t(t.n) * t.kblocks * t.zblocks < std::size_t(sm_count) && t.rows > 2) ||
            t.rows * t.segs * g > kMaxThreads))
      split(++z);
    t.sh = t.rows + r - 1;
    // Few outputs leave the GPU's schedulers a warp or so each: give each thread a slice of the
    // input channels (at most kTargetThreads threads a block) and sum the slices at the end.
    const int per_slice = t.rows * t.segs * g;
    t.split = std::clamp(kTargetThreads / std::max(per_slice, 1), 1, std::min(t.c, kMaxSplit));
    if (max_split > 0) t.split = std::min(t.split, max_split);
    t.threads = per_slice * t.split;
    // Images per block: where blocks beyond about 1.5 per SM remain, a block takes several
    // images one after another and stages its filters once for them (at most 4: the images of
    // a block run in series).
    const std::size_t per_image = std::size_t(t.kblocks) * t.zblocks;
    t.nb = std::clamp(int(std::size_t(t.n) * per_image * 2 / (std::size_t(sm_count) * 3)), 1, 4);
    if (forward_images > 0) t.nb = std::min(t.n, forward_images);
    t.nblocks = (t.n + t.nb - 1) / t.nb;
    const std::size_t tiles = std::size_t(t.c) * r * r * t.kb + std::size_t(t.c) * t.sh * t.sw;
    // The slices' sums: over the tiles for one image, beside them for several (the filters are
    // needed again).
    const std::size_t partials = t.split > 1 ? std::size_t(t.threads) * kPx * kKt : 0;
    t.smem = (t.nb > 1 ? tiles + partials : std::max(tiles, partials)) * sizeof(float);
    if (t.nb > 1 && t.smem > kMaxSharedBytes) {  // no room beside the tiles: one image a block
      t.nb = 1;
      t.nblocks = t.n;
      t.smem = std::max(tiles, partials) * sizeof(float);
    }
    if (t.smem <= kMaxSharedBytes && t.threads <= kMaxThreads) return true;
    if (g == 1) return false;
  }
}

// The pooled forward's plan: plan()'s, then a tile of a block's outputs for one image (kb filters
// x rows x ow) after its other shared memory (see tiled_conv_pool_fits).
bool plan_pooled(Tiled& t, int r, int sm_count) {
  if (!plan(t, r, sm_count) || t.oh % 2 || t.ow % 2 || t.rows % 2) return false;
  t.pool_at = t.smem / sizeof(float);
  t.smem += std::size_t(t.kb) * t.rows * t.ow * sizeof(float);
  return t.smem <= kMaxSharedBytes / 2;
}

// The pooled forward's end of an image: each thread's outputs (with the bias, as the plain forward
// writes them) into the block's tile, then every 2x2 window of the block's rows pooled from there
// by max and argmax as maxpool2x2_forward_kernel takes them (the same bits). The block's every
// thread calls it: it holds the block's barriers.
__device__ void pool_outputs(const Tiled& t, const float (&acc)[kPx][kKt], bool writes, int oyl,
                             int ox0, int kbase, int k0, int n, int row0,
                             const float* __restrict__ bias, float* __restrict__ pooled,
                             std::uint8_t* __restrict__ argmax) {
  extern __shared__ float4 shared4[];
  float* tile = reinterpret_cast<float*>(shared4) + t.pool_at;  // (kb, rows, ow)
  if (writes)
#pragma unroll
    for (int j = 0; j < kKt; ++j) {
      if (kbase + j >= t.k) break;
      const float b0 = bias ? bias[kbase + j] : 0.f;
      float* row = tile + (std::size_t(kbase - k0 + j) * t.rows + oyl) * t.ow;
#pragma unroll
      for (int p = 0; p < kPx; ++p)
        if (ox0 + p < t.ow) row[ox0 + p] = acc[p][j] + b0;
    }
  __syncthreads();
  const int pw = t.ow / 2, per_filter = t.rows / 2 * pw, filters = min(t.kb, t.k - k0);
  for (int e = threadIdx.x; e < filters * per_filter; e += blockDim.x) {
    const int kk = e / per_filter, rest = e - kk * per_filter, wy = rest / pw, wx = rest - wy * pw;
    if (row0 + 2 * wy >= t.oh) continue;  // rows past the image's last (the last row block)
    const float* q = tile + (std::size_t(kk) * t.rows + 2 * wy) * t.ow + 2 * wx;
    PoolWindow v;
    v.a = q[0], v.b = q[1], v.c = q[t.ow], v.d = q[t.ow + 1];
    const float m = std_max(std_max(v.a, v.b), std_max(v.c, v.d));
    const std::size_t o =
        ((std::size_t(n) * t.k + k0 + kk) * (t.oh / 2) + row0 / 2 + wy) * std::size_t(pw) + wx;
    pooled[o] = m;
    if (argmax) argmax[o] = static_cast<std::uint8_t>(first_max(v, m));
  }
  __syncthreads();  // the tile is read before the next image's outputs go in
}

// kPool: out is unused; each image's outputs go to the tile at t.pool_at, and its 2x2 windows are
// pooled from there into `pooled` and `argmax` (maxpool2x2_forward's rules).
template <int R, bool kTransposed, bool kPool>
__global__ void __launch_bounds__(kMaxThreads)
    tiled_kernel(const float* __restrict__ in, const float* __restrict__ filters,
                 const float* __restrict__ bias, float* __restrict__ out,
                 float* __restrict__ pooled, std::uint8_t* __restrict__ argmax, Tiled t) {
  constexpr int kRR = R * R;
  extern __shared__ float4 shared4[];
  float* fil = reinterpret_cast<float*>(shared4);    // (C, R*R, kb): a tap's kb filters adjacent
  float* img = fil + std::size_t(t.c) * kRR * t.kb;  // (C, sh, sw), zero padded
  const int n0 = blockIdx.x * t.nb, k0 = blockIdx.y * t.kb, row0 = blockIdx.z * t.rows;
  const int tid = threadIdx.x, nthreads = blockDim.x;
  // Filters: a thread per (channel, tap) reads the block's kb filters' values of it, kInFlight at
  // a time (consecutive threads read consecutive taps: coalesced).
  for (int tap = tid; tap < t.c * kRR; tap += nthreads) {
    const int cc = tap / kRR, rs = tap % kRR;
    float* dst = fil + std::size_t(tap) * t.kb;
    for (int kk0 = 0; kk0 < t.kb; kk0 += kInFlight) {
      float v[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        const int k = k0 + kk0 + u;
        v[u] = 0.f;
        if (kk0 + u < t.kb && k < t.k)
          v[u] = kTransposed  // forward filters (C' = t.k, K' = t.c, R, R), flipped
                     ? filters[(std::size_t(cc) * t.k + k) * kRR + (kRR - 1 - rs)]
                     : filters[(std::size_t(k) * t.c + cc) * kRR + rs];
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u)
        if (kk0 + u < t.kb) dst[kk0 + u] = v[u];
    }
  }
  const int per_group = t.rows * t.segs, per_slice = per_group * (t.kb / kKt);
  const int slice = tid / per_slice, in_slice = tid % per_slice;
  const int group = in_slice / per_group, rest = in_slice % per_group;
  const int oyl = rest / t.segs, ox0 = (rest % t.segs) * kPx;
  const int oy = row0 + oyl;
  const int kbase = k0 + group * kKt;
  const int kb4 = t.kb / kKt;
  // The slices' sums (see plan): over the tiles for one image a block, beside them for several.
  float* partial = t.nb > 1 ? img + std::size_t(t.c) * t.sh * t.sw : fil;
  const int last = min(t.n, n0 + t.nb);
  for (int n = n0; n < last; ++n) {
    if (n > n0) __syncthreads();  // the previous image's reads are done
    // The input rows this block's outputs read, every channel, zeros outside the image. (Copied
    // through registers: double-buffered cp.async copies, as the weight gradient's, made LeNet's
    // second layer slower here, 8.5 -> 9.9 us a call with 8 steps sharing an H200.)
    const int plane_s = t.sh * t.sw;
    const FastDiv by_plane(plane_s), by_row(t.sw);
    stage(
        t.c * plane_s,
        [&](int e) {
          const int cc = by_plane(e), yx = e - cc * plane_s, yy = by_row(yx);
          const int iy = row0 - t.pad_h + yy, ix = yx - yy * t.sw - t.pad_w;
          return iy >= 0 && iy < t.h && ix >= 0 && ix < t.w
                     ? in[((std::size_t(n) * t.c + cc) * t.h + iy) * t.w + ix]
                     : 0.f;
        },
        [&](int e, float v) { img[e] = v; });
    __syncthreads();
    float acc[kPx][kKt];
#pragma unroll
    for (int p = 0; p < kPx; ++p)
#pragma unroll
      for (int j = 0; j < kKt; ++j) acc[p][j] = 0.f;
    // Channels slice, slice + split, ...; rows past the image's last compute on zeros (no
    // return before the barriers below).
    for (int cc = slice; cc < t.c; cc += t.split) {
      const float* irow = img + (std::size_t(cc) * t.sh + oyl) * t.sw + ox0;
      const float4* ftap =
          reinterpret_cast<const float4*>(fil + std::size_t(cc) * kRR * t.kb) + group;
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const float4 a = *reinterpret_cast<const float4*>(irow + r * t.sw);
        const float4 b = *reinterpret_cast<const float4*>(irow + r * t.sw + 4);
        const float xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
        for (int s = 0; s < R; ++s) {
          const float4 wv = ftap[(r * R + s) * kb4];
#pragma unroll
          for (int p = 0; p < kPx; ++p) {
            acc[p][0] = fmaf(xv[p + s], wv.x, acc[p][0]);
            acc[p][1] = fmaf(xv[p + s], wv.y, acc[p][1]);
            acc[p][2] = fmaf(xv[p + s], wv.z, acc[p][2]);
            acc[p][3] = fmaf(xv[p + s], wv.w, acc[p][3]);
          }
        }
      }
    }
    // The slices' sums, added in slice order by slice 0.
    bool writes = true;
    if (t.split > 1) {
      __syncthreads();
      if (slice > 0) {
        float* mine = partial + (std::size_t(slice) * per_slice + in_slice) * (kPx * kKt);
#pragma unroll
        for (int p = 0; p < kPx; ++p)
#pragma unroll
          for (int j = 0; j < kKt; ++j) mine[p * kKt + j] = acc[p][j];
      }
      __syncthreads();
      writes = slice == 0;
      if (writes)
        for (int q = 1; q < t.split; ++q) {
          const float* theirs = partial + (std::size_t(q) * per_slice + in_slice) * (kPx * kKt);
#pragma unroll
          for (int p = 0; p < kPx; ++p)
#pragma unroll
            for (int j = 0; j < kKt; ++j) acc[p][j] += theirs[p * kKt + j];
        }
    }
    if constexpr (kPool) {
      pool_outputs(t, acc, writes && oy < t.oh, oyl, ox0, kbase, k0, n, row0, bias, pooled, argmax);
      continue;
    }
    if (!writes || oy >= t.oh) continue;
#pragma unroll
    for (int j = 0; j < kKt; ++j) {
      if (kbase + j >= t.k) break;
      const float b0 = bias ? bias[kbase + j] : 0.f;
      float* orow = out + ((std::size_t(n) * t.k + kbase + j) * t.oh + oy) * t.ow;
#pragma unroll
      for (int p = 0; p < kPx; ++p)
        if (ox0 + p < t.ow) orow[ox0 + p] = acc[p][j] + b0;
    }
  }
}

// ---- weight gradient: dw[k][c][i][j] = sum over images and positions of dy[k] x[c] shifted.

// A block takes `kb` filters and a chunk of `nb` images. Its threads are (row slice, channel,
// filter row i, group of 4 filters): each sums the 4 x R weights of its filter row over the
// output rows of its slice (rows slice, slice + slices, ...), per position one float4 of dy (the
// group's 4 filters) and one new input (the row's window slides by one) for 4 R multiply-adds.
// Slices let few channels still fill a block (LeNet's first layer: one channel of 28x28). The
// slices are added in order in shared memory, the chunks by a second launch (sum_filter_parts).
struct TiledFilter {
  int n, c, h, w, k, oh, ow, pad_h, pad_w;
  int kb, nb, chunks, kblocks, slices, threads, sw, shh;
  int kq, krem;  // the filter groups shared out: the first krem blocks take kq + 1, the rest kq
  int buffers;   // tile buffers: 2 when they fit (the next image staged during this one's products)
  std::size_t smem;
};

// The padded image's floats, rounded up to 4 so that dy's tile after it takes float4 loads.
__host__ __device__ inline std::size_t image_floats(const TiledFilter& t) {
  return (std::size_t(t.c) * t.shh * t.sw + 3) / 4 * 4;
}

// One image's tiles: the padded image, then dy (kb a position; a multiple of 4 floats).
__host__ __device__ inline std::size_t tile_floats(const TiledFilter& t) {
  return image_floats(t) + std::size_t(t.oh) * t.ow * t.kb;
}

bool plan_filter(TiledFilter& t, int r, int sm_count) {
  t.sw = t.ow + r - 1;  // padded input row: the windows of every output column
  t.shh = t.oh + r - 1;
  const int groups = (t.k + kKt - 1) / kKt;
  const int per_group = t.c * r;
  if (per_group > kMaxThreads) return false;
  // Filter groups per block: as many as fit kMaxThreads threads; then row slices up to about
  // kTargetThreads threads.
  int g = std::max(1, std::min(groups, kMaxThreads / per_group));
  // Fewer groups a block where the images alone would not give every SM a block (LeNet's first
  // layer at batch 64: 2 of its 5 groups a block ran 14.3 us against 16.8 us for all 5).
  while (g > 1 && std::size_t(t.n) * ((groups + g - 1) / g) < std::size_t(sm_count)) --g;
  if (max_groups > 0) g = std::min(g, max_groups);
  t.kb = g * kKt;
  t.kblocks = (t.k + t.kb - 1) / t.kb;
  t.kq = groups / t.kblocks, t.krem = groups % t.kblocks;
  t.slices = std::clamp(kTargetThreads / (per_group * g), 1, t.oh);
  t.threads = per_group * g * t.slices;
  // Image chunks: enough blocks for two per SM.
  const int want = std::max(1, (2 * sm_count + t.kblocks - 1) / t.kblocks);
  t.nb = std::max(1, (t.n + want - 1) / want);
  if (filter_images > 0) t.nb = std::min(t.n, filter_images);
  t.chunks = (t.n + t.nb - 1) / t.nb;
  const std::size_t tiles = tile_floats(t);
  // Each thread's weights and bias sums, for the slices' sum (reuses the tiles).
  const std::size_t partials = std::size_t(t.threads) * (kKt * r + kKt);
  t.buffers = t.nb > 1 && 2 * tiles * sizeof(float) <= kMaxSharedBytes ? 2 : 1;
  t.smem = std::max(t.buffers * tiles, partials) * sizeof(float);
  // Blocks of fewer than two warps leave the GPU idle: the direct kernel is the better fit then.
  return t.threads >= 64 && t.threads <= kMaxThreads && t.smem <= kMaxSharedBytes;
}

// The filter groups are shared out evenly among a weight gradient's blocks (kq, krem): LeNet's
// second layer's 13 groups of 4 as 5 + 4 + 4, not 5 + 5 + 5 of which 2 computed on zeros.
struct BlockFilters {
  int own;  // the block's filter groups
  int k0;   // its first filter
};

__device__ inline BlockFilters block_filters(const TiledFilter& t, int kblock) {
  return {t.kq + (kblock < t.krem ? 1 : 0), (kblock * t.kq + min(kblock, t.krem)) * kKt};
}

// A thread's part of a block of tiled_filter_kernel: (slice, channel, filter row, group). A
// warp's dy reads are its groups' adjacent float4 (one shared-memory wavefront), its input reads
// a few rows each broadcast to its groups. A block with fewer groups than the most leaves its last
// threads (whole warps but one) to staging.
struct FilterRole {
  BlockFilters block;
  int per_slice;  // threads a row slice: (channel, filter row, group)
  int slice;      // t.oh for a thread with no part (its loop over rows is empty)
  int in_slice, c, i, g;
};

template <int R>
__device__ inline FilterRole filter_role(const TiledFilter& t, int kblock, int tid) {
  FilterRole r;
  r.block = block_filters(t, kblock);
  const int own = r.block.own;
  r.per_slice = t.c * R * own;
  r.slice = tid < t.slices * r.per_slice ? tid / r.per_slice : t.oh;  // t.oh >= t.slices
  r.in_slice = tid % r.per_slice;
  r.c = r.in_slice / (R * own);
  r.i = (r.in_slice % (R * own)) / own;
  r.g = r.in_slice % own;
  return r;
}

// The thread's index, read so that the compiler derives its role again after the images' loop
// rather than keeping the first derivation in registers across it (64 a thread: 8-24 bytes
// spilled). An asm volatile read is not merged with threadIdx.x's.
__device__ inline int thread_index_again() {
  int v;
  asm volatile("mov.u32 %0, %%tid.x;" : "=r"(v));
  return v;
}

// Two blocks an SM: 64 registers a thread instead of 90, so a block of 500 threads no longer has an
// SM's registers to itself (8 bytes spilled at R = 5 then; none since the bias sums left the warps
// without a bias thread). Nsight Compute had it latency-bound at one block an SM (3.9 warps a
// scheduler, 1.4 eligible); a fused array of 64 LeNets gained 1-2.5% in five same-call pairs on an
// H200, the lone step and the kernel's own time at share 8 unchanged.
// kOw: the output width when known at compile time (0: t.ow). LeNet's second layer (8 wide) then
// takes its rows in two unrolled steps, the window's moves and the loop's control compiled away.
template <int R, int kOw>
__global__ void __launch_bounds__(kMaxThreads, 2)
    tiled_filter_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                        float* __restrict__ dw_parts /* (K*C, chunks, R*R) */,
                        float* __restrict__ db_parts /* (K, chunks) or null */, TiledFilter t) {
  constexpr int kRR = R * R;
  extern __shared__ float4 shared4[];
  // t.buffers of (C, shh, sw) padded image, then dy (OH*OW, kb); tile_floats(t) each.
  float* img = reinterpret_cast<float*>(shared4);
  const int groups = t.kb / kKt;  // the most a block takes: dy's stride in shared memory
  const FilterRole role = filter_role<R>(t, blockIdx.x, threadIdx.x);
  const int slice = role.slice;
  const int c = role.c, i = role.i, g = role.g, chunk = blockIdx.y;
  const bool with_bias = db_parts != nullptr && slice < t.slices && c == 0 && i == 0;
  // Every thread is active here: the warps that sum the bias gradient (the others skip it).
  const bool bias_warp = __any_sync(__activemask(), with_bias);
  float acc[kKt][R], bacc[kKt];
#pragma unroll
  for (int q = 0; q < kKt; ++q) {
    bacc[q] = 0.f;
#pragma unroll
    for (int j = 0; j < R; ++j) acc[q][j] = 0.f;
  }
  const int first = chunk * t.nb, last = min(t.n, first + t.nb);
  const int plane = t.oh * t.ow, plane_s = t.shh * t.sw;
  const FastDiv by_plane(plane_s), by_row(t.sw), by_pos(plane);
  const int stride = blockDim.x, step_k = by_pos(stride), step_p = stride - step_k * plane;
  // Image nn's tiles into buffer b, copied asynchronously: the padded image (zeros outside it),
  // and dy read in its order (coalesced) but stored a position's kb values adjacent.
  const auto fetch = [&](int nn, int b) {
    float* const to_img = img + b * tile_floats(t);
    float* const to_grad = to_img + image_floats(t);
    stage_async(
        t.c * plane_s, x,
        [&](int e) -> const float* {
          const int cc = by_plane(e), yx = e - cc * plane_s, yy = by_row(yx);
          const int iy = yy - t.pad_h, ix = yx - yy * t.sw - t.pad_w;
          return iy >= 0 && iy < t.h && ix >= 0 && ix < t.w
                     ? x + ((std::size_t(nn) * t.c + cc) * t.h + iy) * t.w + ix
                     : nullptr;
        },
        [&](int e) { return to_img + e; });
    // dy value e = kk * plane + p (read in its order: coalesced) to position p's slot kk, (kk, p)
    // carried along with e: no division a value. (Two float divisions a value were most of the
    // staging's instructions; LeNet's first layer stages 20 planes of dy an image for few
    // products, and integer work was a quarter of its instructions.)
    const BlockFilters block = block_filters(t, blockIdx.x);
    const int k0 = block.k0;
    const float* const from = dy + (std::size_t(nn) * t.k + k0) * plane;
    int kk = by_pos(int(threadIdx.x)), p = int(threadIdx.x) - kk * plane;
    for (int e = threadIdx.x; e < block.own * kKt * plane; e += stride) {
      const bool real = k0 + kk < t.k;  // past the last filter: zeros
      __pipeline_memcpy_async(to_grad + std::size_t(p) * t.kb + kk, real ? from + e : dy,
                              sizeof(float), real ? 0 : sizeof(float));
      p += step_p, kk += step_k;
      if (p >= plane) p -= plane, ++kk;
    }
    __pipeline_commit();
  };
  if (first < last) fetch(first, 0);
  for (int nn = first; nn < last; ++nn) {
    const int b = t.buffers == 2 ? (nn - first) & 1 : 0;
    if (nn > first) __syncthreads();  // the previous image's reads are done: its buffer refills
    if (t.buffers == 1) {
      if (nn > first) fetch(nn, 0);
      __pipeline_wait_prior(0);
    } else if (nn + 1 < last) {
      fetch(nn + 1, b ^ 1);
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncthreads();  // image nn's tiles are in
    const float* const img_b = img + b * tile_floats(t);
    const float* const grad_b = img_b + image_floats(t);
    // The image's rows, with the bias sums only in warps that hold a bias thread (a branch the
    // whole warp takes): in the loop itself the compiler made every thread add them, 16 of the
    // inner loop's 121 instructions.
    const auto rows = [&](auto bias) {
      const int ow = kOw > 0 ? kOw : t.ow;
      for (int oy = slice; oy < t.oh; oy += t.slices) {
        const float* xrow = img_b + (std::size_t(c) * t.shh + oy + i) * t.sw;
        const float4* grow =
            reinterpret_cast<const float4*>(grad_b + std::size_t(oy) * ow * t.kb) + g;
        // The row's window slides kStep positions at a time: kStep new inputs and kStep float4
        // of dy feed kStep * kKt * R multiply-adds, and the window moves once per kStep.
        constexpr int kStep = 4;
        float xv[R - 1 + kStep];
#pragma unroll
        for (int j = 0; j < R - 1; ++j) xv[j] = xrow[j];
        int ox = 0;
#pragma unroll
        for (; ox + kStep <= ow; ox += kStep) {
          float dv[kStep][kKt];
#pragma unroll
          for (int u = 0; u < kStep; ++u) {
            xv[R - 1 + u] = xrow[ox + R - 1 + u];
            const float4 d = grow[(ox + u) * groups];
            dv[u][0] = d.x, dv[u][1] = d.y, dv[u][2] = d.z, dv[u][3] = d.w;
          }
#pragma unroll
          for (int u = 0; u < kStep; ++u)
#pragma unroll
            for (int q = 0; q < kKt; ++q) {
#pragma unroll
              for (int j = 0; j < R; ++j) acc[q][j] = fmaf(dv[u][q], xv[u + j], acc[q][j]);
              if constexpr (decltype(bias)::value) bacc[q] += dv[u][q];
            }
#pragma unroll
          for (int j = 0; j < R - 1; ++j) xv[j] = xv[kStep + j];
        }
        for (; ox < ow; ++ox) {  // the row's last ow % kStep positions
          xv[R - 1] = xrow[ox + R - 1];
          const float4 d = grow[ox * groups];
          const float dv[kKt] = {d.x, d.y, d.z, d.w};
#pragma unroll
          for (int q = 0; q < kKt; ++q) {
#pragma unroll
            for (int j = 0; j < R; ++j) acc[q][j] = fmaf(dv[q], xv[j], acc[q][j]);
            if constexpr (decltype(bias)::value) bacc[q] += dv[q];
          }
#pragma unroll
          for (int j = 0; j < R - 1; ++j) xv[j] = xv[j + 1];
        }
      }
    };
    if (bias_warp)
      rows(std::true_type{});
    else
      rows(std::false_type{});
  }
  // The slices' sums, added in slice order by slice 0 (the tiles are no longer needed). The
  // thread's role derived again, not kept in registers across the loop (64 a thread: it spilled).
  const FilterRole me = filter_role<R>(t, blockIdx.x, thread_index_again());
  constexpr int kOut = kKt * R + kKt;  // weights, then the bias gradient
  float* partial = reinterpret_cast<float*>(shared4);
  if (t.slices > 1) {
    __syncthreads();
    if (me.slice > 0 && me.slice < t.slices) {
      float* mine = partial + (std::size_t(me.slice) * me.per_slice + me.in_slice) * kOut;
#pragma unroll
      for (int q = 0; q < kKt; ++q) {
#pragma unroll
        for (int j = 0; j < R; ++j) mine[q * R + j] = acc[q][j];
        mine[kKt * R + q] = bacc[q];
      }
    }
    __syncthreads();
    if (me.slice > 0) return;  // the idle threads too
    for (int sl = 1; sl < t.slices; ++sl) {
      const float* theirs = partial + (std::size_t(sl) * me.per_slice + me.in_slice) * kOut;
#pragma unroll
      for (int q = 0; q < kKt; ++q) {
#pragma unroll
        for (int j = 0; j < R; ++j) acc[q][j] += theirs[q * R + j];
        bacc[q] += theirs[kKt * R + q];
      }
    }
  }
  if (me.slice >= t.slices) return;  // an idle thread
  const bool bias_sums = db_parts != nullptr && me.c == 0 && me.i == 0;
#pragma unroll
  for (int q = 0; q < kKt; ++q) {
    const int k = me.block.k0 + me.g * kKt + q;
    if (k >= t.k) break;
    float* part = dw_parts + ((std::size_t(k) * t.c + me.c) * t.chunks + chunk) * kRR + me.i * R;
#pragma unroll
    for (int j = 0; j < R; ++j) part[j] = acc[q][j];
    if (bias_sums) db_parts[std::size_t(k) * t.chunks + chunk] = bacc[q];
  }
}

template <int R, bool kTransposed, bool kPool = false>
void launch(const Tiled& t, const float* in, const float* filters, const float* bias, float* out,
            cudaStream_t stream, float* pooled = nullptr, std::uint8_t* argmax = nullptr) {
  allow_shared_memory<tiled_kernel<R, kTransposed, kPool>>();
  const dim3 grid(static_cast<unsigned>(t.nblocks), static_cast<unsigned>(t.kblocks),
                  static_cast<unsigned>(t.zblocks));
  tiled_kernel<R, kTransposed, kPool>
      <<<grid, t.threads, t.smem, stream>>>(in, filters, bias, out, pooled, argmax, t);
  SWEEP_CHECK_LAUNCH();
}

Tiled forward_problem(const ConvGeom& g) {
  Tiled t{};
  t.n = g.n, t.c = g.c, t.h = g.h, t.w = g.w, t.k = g.k, t.oh = g.out_h, t.ow = g.out_w;
  t.pad_h = g.pad_h, t.pad_w = g.pad_w;
  return t;
}

Tiled data_problem(const ConvGeom& g) {
  Tiled t{};
  t.n = g.n, t.c = g.k, t.h = g.out_h, t.w = g.out_w, t.k = g.c, t.oh = g.h, t.ow = g.w;
  t.pad_h = g.r - 1 - g.pad_h, t.pad_w = g.s - 1 - g.pad_w;
  return t;
}

// The planning only depends on the shape; 132 SMs stands in for "a GPU's worth" here.
constexpr int kFitSms = 132;

TiledFilter filter_problem(const ConvGeom& g) {
  TiledFilter t{};
  t.n = g.n, t.c = g.c, t.h = g.h, t.w = g.w, t.k = g.k, t.oh = g.out_h, t.ow = g.out_w;
  t.pad_h = g.pad_h, t.pad_w = g.pad_w;
  return t;
}

template <int R, int kOw>
void launch_filter_as(const TiledFilter& t, const float* x, const float* dy, float* dw_parts,
                      float* db_parts, cudaStream_t stream) {
  allow_shared_memory<tiled_filter_kernel<R, kOw>>();
  const dim3 grid(static_cast<unsigned>(t.kblocks), static_cast<unsigned>(t.chunks));
  tiled_filter_kernel<R, kOw><<<grid, t.threads, t.smem, stream>>>(x, dy, dw_parts, db_parts, t);
  SWEEP_CHECK_LAUNCH();
}

template <int R>
void launch_filter(const TiledFilter& t, const float* x, const float* dy, float* dw_parts,
                   float* db_parts, cudaStream_t stream) {
  if (t.ow == 8) return launch_filter_as<R, 8>(t, x, dy, dw_parts, db_parts, stream);
  launch_filter_as<R, 0>(t, x, dy, dw_parts, db_parts, stream);
}

// sm_count where its plan slices the channels as order_sm_count's does (tiled_conv_forward_sms).
int same_split_sms(Tiled a, int r, int sm_count, int order_sm_count) {
  Tiled b = a;
  return plan(a, r, sm_count) && plan(b, r, order_sm_count) && a.split == b.split ? sm_count
                                                                                  : order_sm_count;
}

}  // namespace

bool tiled_conv_filter_fits(const ConvGeom& g, int sm_count) {
  TiledFilter t = filter_problem(g);
  return tiled_conv_fits(g) && plan_filter(t, g.r, sm_count);
}

std::size_t tiled_conv_filter_scratch(const ConvGeom& g, int sm_count) {
  TiledFilter t = filter_problem(g);
  if (!plan_filter(t, g.r, sm_count)) return 0;
  return std::size_t(t.chunks) * (std::size_t(g.k) * g.c * g.r * g.s + g.k);
}

void tiled_conv_backward_filter(const ConvGeom& g, const float* x, const float* dy, float* dw,
                                float* db, int sm_count, float* scratch, cudaStream_t stream) {
  TiledFilter t = filter_problem(g);
  if (!plan_filter(t, g.r, sm_count)) throw Error("tiled convolution: the shape does not fit");
  const std::size_t weights = std::size_t(g.k) * g.c * g.r * g.s;
  float* dw_parts = scratch;
  float* db_parts = db ? scratch + weights * t.chunks : nullptr;
  if (g.r == 3)
    launch_filter<3>(t, x, dy, dw_parts, db_parts, stream);
  else
    launch_filter<5>(t, x, dy, dw_parts, db_parts, stream);
  sum_filter_parts(dw_parts, db_parts, dw, db, g.k, g.c, g.r * g.s, t.chunks, stream);
}

void tiled_conv_max_groups(int groups) { max_groups = groups; }
void tiled_conv_max_split(int split) { max_split = split; }
void tiled_conv_forward_images(int images) { forward_images = images; }
void tiled_conv_filter_images(int images) { filter_images = images; }

bool tiled_conv_fits(const ConvGeom& g) {
  if (!small_conv_shape(g)) return false;
  Tiled f = forward_problem(g), d = data_problem(g);
  return plan(f, g.r, kFitSms) && plan(d, g.r, kFitSms);
}

void tiled_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b, float* y,
                        int sm_count, cudaStream_t stream) {
  Tiled t = forward_problem(g);
  if (!plan(t, g.r, sm_count)) throw Error("tiled convolution: the shape does not fit");
  if (g.r == 3)
    launch<3, false>(t, x, w, b, y, stream);
  else
    launch<5, false>(t, x, w, b, y, stream);
}

int tiled_conv_forward_sms(const ConvGeom& g, int sm_count, int order_sm_count) {
  return same_split_sms(forward_problem(g), g.r, sm_count, order_sm_count);
}

int tiled_conv_data_sms(const ConvGeom& g, int sm_count, int order_sm_count) {
  return same_split_sms(data_problem(g), g.r, sm_count, order_sm_count);
}

bool tiled_conv_pool_fits(const ConvGeom& g, int sm_count) {
  Tiled t = forward_problem(g);
  return tiled_conv_fits(g) && plan_pooled(t, g.r, sm_count);
}

void tiled_conv_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                   const float* b, float* pooled, std::uint8_t* argmax,
                                   int sm_count, cudaStream_t stream) {
  Tiled t = forward_problem(g);
  if (!plan_pooled(t, g.r, sm_count))
    throw Error("tiled convolution: the pooled shape does not fit");
  if (g.r == 3)
    launch<3, false, true>(t, x, w, b, nullptr, stream, pooled, argmax);
  else
    launch<5, false, true>(t, x, w, b, nullptr, stream, pooled, argmax);
}

void tiled_conv_backward_data(const ConvGeom& g, const float* w, const float* dy, float* dx,
                              int sm_count, cudaStream_t stream) {
  Tiled t = data_problem(g);
  if (!plan(t, g.r, sm_count)) throw Error("tiled convolution: the shape does not fit");
  if (g.r == 3)
    launch<3, true>(t, dy, w, nullptr, dx, stream);
  else
    launch<5, true>(t, dy, w, nullptr, dx, stream);
}

}  // namespace sweep::trainer::cuda
