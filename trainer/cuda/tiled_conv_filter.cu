/*
 * tiled_conv_filter.cu — the tiled weight-gradient kernel of tiled_conv.h, its block plan and
 * launches; the image chunks' sums are then added in order by direct_conv.h's sum_filter_parts.
 */
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/staging.cuh"
#include "trainer/cuda/tiled_conv.h"
#include "trainer/cuda/tiled_conv_blocks.h"

namespace sweep::trainer::cuda {

namespace {

using namespace tiled;

int filter_images = 0;  // tiled_conv_filter_images

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
  // Fewer groups a block where the images alone would not give every SM a block: idle SMs cost
  // more than reading an image again.
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

// Two blocks an SM: 64 registers a thread, so a block of 500 threads does not have an SM's
// registers to itself (no spills at R = 5, the bias sums leaving the warps without a bias thread).
// At one block an SM the kernel is latency-bound (few eligible warps a scheduler); two give a
// fused array's members more to overlap, and cost a lone step nothing.
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
    // carried along with e: no division a value. Divisions would be most of the staging's
    // instructions, and a layer of few products (LeNet's first stages 20 planes of dy an image)
    // is bound by its staging.
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

void tiled_conv_filter_images(int images) { filter_images = images; }

}  // namespace sweep::trainer::cuda
