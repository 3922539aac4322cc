/*
 * tiled_conv_forward.cu — the tiled convolution kernel of tiled_conv.h for the forward (plain, or
 * pooling its outputs 2x2) and the data gradient (the same kernel on the transposed problem), its
 * block plan and launches.
 */
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "common/check.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/maxpool2x2.cuh"
#include "trainer/cuda/staging.cuh"
#include "trainer/cuda/tiled_conv.h"
#include "trainer/cuda/tiled_conv_blocks.h"

namespace sweep::trainer::cuda {

namespace {

using namespace tiled;

constexpr int kPx = 4;  // adjacent output positions of a row per thread
constexpr int kMaxSplit = 8;
int max_split = 0;       // tiled_conv_max_split
int forward_images = 0;  // tiled_conv_forward_images

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
  // groups per block make more blocks, each reading the image again: worth it only while the
  // GPU would otherwise have too few blocks).
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
    // The input rows this block's outputs read, every channel, zeros outside the image. Copied
    // through registers: double-buffered cp.async copies, as the weight gradient's, are slower
    // here, where each image's rows are read by few products.
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

// sm_count where its plan slices the channels as order_sm_count's does (tiled_conv_forward_sms).
int same_split_sms(Tiled a, int r, int sm_count, int order_sm_count) {
  Tiled b = a;
  return plan(a, r, sm_count) && plan(b, r, order_sm_count) && a.split == b.split ? sm_count
                                                                                  : order_sm_count;
}

}  // namespace

void tiled_conv_max_groups(int groups) { max_groups = groups; }
void tiled_conv_max_split(int split) { max_split = split; }
void tiled_conv_forward_images(int images) { forward_images = images; }

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
