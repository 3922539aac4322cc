/*
 * nhwc_wgrad.cu — the kernels of nhwc_wgrad.h.
 *
 * A block takes a tile of the filters and channels (up to 8 accumulator tiles of 16 x 16 a warp:
 * all of them at K * C <= 2048, a 32 x 64 or 64 x 32 tile beyond) and a part of the rows of one or
 * more images. For each row p it needs rows p - 1, p, p + 1 of x (each with a zero column either
 * side, and zeros for rows outside the image, kept in a ring of three staged rows) and row p of dy
 * in shared memory, the tile's channels of each; warp t (one per tap r, s) then adds dy^T (K x
 * positions) times x shifted by the tap (positions x C) to its K x C accumulators, eight positions
 * per WMMA step. The positions of a row are padded to a multiple of 8 with zero dy, so they add
 * nothing.
 */
#include <mma.h>

#include <algorithm>
#include <string>

#include "common/check.h"
#include "trainer/cuda/nhwc_wgrad.h"

namespace sweep::trainer::cuda {

namespace {

using namespace nvcuda;

constexpr int kTaps = 9;          // 3x3, one warp each
constexpr int kMaxFragments = 8;  // (K / 16) * (C / 16) accumulators of 16 x 16 per warp
constexpr int kMaxRow = 64;
constexpr int kReduceThreads = 256;

int padded_row(int w) { return (w + 7) / 8 * 8; }

// Blocks per image: its rows in parts, so a batch of a few hundred images makes blocks enough to
// keep every SM's loads in flight (two parts of 16 rows at 32x32).
int row_parts(const ConvGeom& g) { return g.h >= 16 ? 2 : 1; }

// A block's tile of filters and channels, in tiles of 16: all of them where K * C fits a warp's
// accumulators, else the squarest tile of 8 that divides both (each tile reads x for its channels
// and dy for its filters, so square tiles read the least).
struct Tile {
  int kt = 0, ct = 0;
};
Tile tile_of(const ConvGeom& g) {
  if (g.k % 16 != 0 || g.c % 16 != 0) return {};
  constexpr Tile kTiles[] = {{2, 4}, {4, 2}, {1, 8}, {8, 1}, {2, 2},
                             {1, 4}, {4, 1}, {1, 2}, {2, 1}, {1, 1}};
  for (const Tile t : kTiles)
    if (g.k == 16 * t.kt && g.c == 16 * t.ct) return t;  // the whole gradient in one tile
  for (const Tile t : kTiles)
    if (g.k % (16 * t.kt) == 0 && g.c % (16 * t.ct) == 0) return t;
  return {};
}
int tiles_of(const ConvGeom& g, Tile t) { return (g.k / (16 * t.kt)) * (g.c / (16 * t.ct)); }

// Images a block: enough that the blocks are about two per SM of an H200's 132 where the batch
// allows more (small images with many tiles would otherwise make thousands of blocks, each
// staging a little and writing a whole partial, all of which the reduction reads again).
constexpr int kTargetBlocks = 264;
int images_per_block(const ConvGeom& g, Tile t) {
  const long long per_image = static_cast<long long>(row_parts(g)) * tiles_of(g, t);
  return static_cast<int>(std::clamp<long long>(g.n * per_image / kTargetBlocks, 1, g.n));
}
int block_images(const ConvGeom& g, Tile t) {
  const int ipb = images_per_block(g, t);
  return (g.n + ipb - 1) / ipb;
}

// Shared-memory rows (a position's channels, or its filters) are padded by 8 floats: a WMMA tile
// load reads 8 or 16 such rows, which unpadded (C a multiple of 32) all start in one bank. Eight
// keeps every row start 32-byte aligned, as WMMA's loads need.
constexpr int kRowPad = 8;

// Rows a step: one. More rows between two barriers run slower (the larger staging leaves fewer
// blocks on each SM). A compile-time constant: the staging's index arithmetic then has no
// division left.
constexpr int kRowsPerStep = 1;

std::size_t shared_bytes(const ConvGeom& g, Tile t) {
  const int row = padded_row(g.w);
  return (std::size_t(kRowsPerStep + 2) * (row + 2) * (16 * t.ct + kRowPad) +
          std::size_t(kRowsPerStep) * row * (16 * t.kt + kRowPad)) *
         sizeof(float);
}

constexpr std::size_t kMaxShared = 96 * 1024;

// Float4 i of rows of `width` floats (i / (width / 4): the row), stored in rows of `stride`,
// rounded to TF32 here, once, rather than in every fragment a warp loads (dy's by all nine
// warps): the products' inputs are the same values.
__device__ __forceinline__ void put(float* base, int stride, int width, int i, float4 v) {
  v.x = wmma::__float_to_tf32(v.x);
  v.y = wmma::__float_to_tf32(v.y);
  v.z = wmma::__float_to_tf32(v.z);
  v.w = wmma::__float_to_tf32(v.w);
  *reinterpret_cast<float4*>(base + (i / (width / 4)) * stride + i % (width / 4) * 4) = v;
}

// KT, CT: tiles of 16 along K and C. Block (b, part, tile) takes filters and channels `tile` of
// the K_total x C_total gradient and rows [part * rows, (part + 1) * rows) of images
// b * images .. b * images + images - 1, one after another, kRowsPerStep of them a step (staged x
// and dy rows give the warps that many rows of products between two barriers). The x rows a step
// needs live in a ring of kRowsPerStep + 2
// staged rows: each step stages the next step's new x rows and dy rows, loaded into registers
// before this step's products (so the loads overlap them) and stored after.
template <int KT, int CT>
__global__ void __launch_bounds__(kTaps * 32)
    wgrad_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                 float* __restrict__ partial, int batch, int h, int w, int k_total, int c_total,
                 int images, int rows_per_part) {
  constexpr int K = KT * 16, C = CT * 16;
  // Float4s a thread holds between the load and the store, per step in flight (two): a step at
  // 32 channels of 32 positions is two a thread; eight held 32 registers through the products
  // and made the kernel spill.
  constexpr int kPrefetch = 2;
  constexpr int LX = C + kRowPad, LD = K + kRowPad;  // shared row strides
  extern __shared__ __align__(32) float smem[];
  const int row = (w + 7) / 8 * 8, staged = row + 2;  // positions of dy, of a staged x row
  constexpr int R = kRowsPerStep, ring = R + 2;
  float* xs = smem;                       // ring [ring][staged][LX]
  float* ds = smem + ring * staged * LX;  // [R][row][LD]
  const int tap = threadIdx.x / 32, r = tap / 3, s = tap % 3;
  const int p0 = blockIdx.y * rows_per_part, p1 = min(h, p0 + rows_per_part);
  const int k_tiles = k_total / K, k0 = int(blockIdx.z) % k_tiles * K,
            c0 = int(blockIdx.z) / k_tiles * C;
  int n = 0;                                            // the image being staged
  const int x4 = staged * (C / 4), d4 = row * (K / 4);  // float4s of a staged x row, a dy row

  // x row y (zeros outside the image) as float4 i of a staged row; dy row p likewise (zeros past
  // the part: those rows are another block's).
  const auto x_at = [&](int y, int i) {
    const int c4 = i % (C / 4), col = i / (C / 4) - 1;
    if (y < 0 || y >= h || col < 0 || col >= w) return make_float4(0.f, 0.f, 0.f, 0.f);
    return reinterpret_cast<const float4*>(x + ((std::size_t(n) * h + y) * w + col) * c_total +
                                           c0)[c4];
  };
  const auto dy_at = [&](int p, int i) {
    const int k4 = i % (K / 4), q = i / (K / 4);
    if (p >= p1 || q >= w) return make_float4(0.f, 0.f, 0.f, 0.f);
    return reinterpret_cast<const float4*>(dy + ((std::size_t(n) * h + p) * w + q) * k_total +
                                           k0)[k4];
  };
  const auto slot = [ring](int y) { return ((y % ring) + ring) % ring; };

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[KT][CT];
#pragma unroll
  for (int i = 0; i < KT; ++i)
#pragma unroll
    for (int j = 0; j < CT; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  // The step at p stages x rows p + 1 .. p + R and dy rows p .. p + R - 1: float4 i of them. A
  // thread's (j-th: i = threadIdx.x + j * blockDim.x) are held in registers (constant indices)
  // between the load and the store; a tail past kPrefetch of them is copied directly. Two steps
  // are in flight (sets a and b): a step's loads are issued two steps before their products,
  // so a whole step's products hide their latency (one step's did not: the SMs issued an
  // instruction every 3.2 cycles, waiting).
  static_assert(R == 1, "the two-step pipeline below advances one row a step");
  float4 held_a[kPrefetch], held_b[kPrefetch];
  const int xs4 = R * x4, total = R * (x4 + d4);
  // Float4 i of `per_row` a row: its row among the step's and its place in that row (one row a
  // step: no division at all).
  const auto row_of = [](int i, int per_row) { return R == 1 ? 0 : i / per_row; };
  const auto in_row = [](int i, int per_row) { return R == 1 ? i : i % per_row; };
  const auto fetch = [&](int p, int i) {
    return i < xs4 ? x_at(p + 1 + row_of(i, x4), in_row(i, x4))
                   : dy_at(p + row_of(i - xs4, d4), in_row(i - xs4, d4));
  };
  const auto place = [&](int p, int i, float4 v) {
    if (i < xs4)
      put(xs + slot(p + 1 + row_of(i, x4)) * staged * LX, LX, C, in_row(i, x4), v);
    else
      put(ds + row_of(i - xs4, d4) * row * LD, LD, K, in_row(i - xs4, d4), v);
  };
  const auto load = [&](int p, float4(&held)[kPrefetch]) {
#pragma unroll
    for (int j = 0; j < kPrefetch; ++j) {
      const int i = threadIdx.x + j * blockDim.x;
      if (i < total) held[j] = fetch(p, i);
    }
  };
  const auto store = [&](int p, const float4(&held)[kPrefetch]) {
#pragma unroll
    for (int j = 0; j < kPrefetch; ++j) {
      const int i = threadIdx.x + j * blockDim.x;
      if (i < total) place(p, i, held[j]);
    }
    for (int i = threadIdx.x + kPrefetch * blockDim.x; i < total; i += blockDim.x)
      place(p, i, fetch(p, i));
  };
  // Warp (r, s)'s products of row p: dy row p (the one staged) with x row p + r - 1.
  const auto products = [&](int p) {
    const float* xr = xs + slot(p + r - 1) * staged * LX;
    for (int m0 = 0; m0 < row; m0 += 8) {
      // A (16 x 8): dy^T, element (k, m) at ds[(m0 + m) * LD + k]: column-major with ld LD.
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> a[KT];
#pragma unroll
      for (int i = 0; i < KT; ++i) wmma::load_matrix_sync(a[i], ds + m0 * LD + i * 16, LD);
#pragma unroll
      for (int j = 0; j < CT; ++j) {
        // B (8 x 16): x at tap (r, s), element (m, c) at xr[(m0 + m + s) * LX + c]: row-major.
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
        wmma::load_matrix_sync(b, xr + (m0 + s) * LX + j * 16, LX);
#pragma unroll
        for (int i = 0; i < KT; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
      }
    }
  };
  const int first = blockIdx.x * images, last = min(batch, first + images);
  for (n = first; n < last && p0 < p1; ++n) {
    // Rows p0 - 1 and p0 of x, then the step at p0's other rows. The previous image's last step
    // ended on a barrier after its products: its slots are free.
    for (int y = p0 - 1; y <= p0; ++y)
      for (int i = threadIdx.x; i < x4; i += blockDim.x)
        put(xs + slot(y) * staged * LX, LX, C, i, x_at(y, i));
    load(p0, held_a);
    store(p0, held_a);
    if (p0 + 1 < p1) load(p0 + 1, held_a);
    // Two rows an iteration, so that each set of held registers has constant indices.
    for (int p = p0; p < p1; p += 2) {
      __syncthreads();  // step p staged
      if (p + 2 < p1) load(p + 2, held_b);
      products(p);
      __syncthreads();  // row p's readers done: its dy slot and x row p - 1's slot are free
      if (p + 1 >= p1) break;
      store(p + 1, held_a);
      __syncthreads();  // step p + 1 staged
      if (p + 3 < p1) load(p + 3, held_a);
      products(p + 1);
      __syncthreads();
      if (p + 2 < p1) store(p + 2, held_b);
    }
  }
  // The block's partial: [tap][K_total][C_total], this tile's part of it.
  float* out =
      partial +
      ((std::size_t(blockIdx.x) * gridDim.y + blockIdx.y) * kTaps + tap) * k_total * c_total +
      std::size_t(k0) * c_total + c0;
#pragma unroll
  for (int i = 0; i < KT; ++i)
#pragma unroll
    for (int j = 0; j < CT; ++j)
      wmma::store_matrix_sync(out + std::size_t(i) * 16 * c_total + j * 16, acc[i][j], c_total,
                              wmma::mem_row_major);
}

// dw[k][c][r][s] = the partials [n][part][r * 3 + s][k][c] added in order. A block takes 64
// outputs (16 lanes of float4); its 16 rows of threads each add a contiguous sixteenth of the
// partials, and the sixteen sums are then added in row order: many loads in flight, and the same
// order every run.
constexpr int kReduceLanes = 16, kReduceRows = kReduceThreads / kReduceLanes;

__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const float* __restrict__ partial, int parts, int k, int c,
                  float* __restrict__ dw) {
  __shared__ float4 sums[kReduceRows][kReduceLanes];
  const int per_image4 = kTaps * k * c / 4;  // 16 | c
  const int lane = threadIdx.x % kReduceLanes, part_row = threadIdx.x / kReduceLanes;
  const int o4 = blockIdx.x * kReduceLanes + lane;
  const int per_row = (parts + kReduceRows - 1) / kReduceRows;
  const int first = part_row * per_row, last = min(parts, first + per_row);
  float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
  if (o4 < per_image4) {
    const float4* src = reinterpret_cast<const float4*>(partial) + o4;
#pragma unroll 4
    for (int n = first; n < last; ++n) {
      const float4 v = src[std::size_t(n) * per_image4];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
  }
  sums[part_row][lane] = sum;
  __syncthreads();
  if (part_row != 0 || o4 >= per_image4) return;
  float4 total = sums[0][lane];
  for (int row = 1; row < kReduceRows; ++row) {
    total.x += sums[row][lane].x;
    total.y += sums[row][lane].y;
    total.z += sums[row][lane].z;
    total.w += sums[row][lane].w;
  }
  const float t[4] = {total.x, total.y, total.z, total.w};
  for (int e = 0; e < 4; ++e) {
    const int i = o4 * 4 + e, ci = i % c, ki = i / c % k, tap = i / c / k;
    dw[(ki * c + ci) * kTaps + tap] = t[e];
  }
}

template <int KT, int CT>
void launch(const ConvGeom& g, const float* x, const float* dy, float* scratch,
            cudaStream_t stream) {
  const Tile t{KT, CT};
  const std::size_t smem = shared_bytes(g, t);
  static_assert(KT * CT <= kMaxFragments);
  if (smem > 48 * 1024)
    SWEEP_CHECK_CUDA(cudaFuncSetAttribute(wgrad_kernel<KT, CT>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int parts = row_parts(g);
  const dim3 grid(block_images(g, t), parts, tiles_of(g, t));
  wgrad_kernel<KT, CT><<<grid, kTaps * 32, smem, stream>>>(
      x, dy, scratch, g.n, g.h, g.w, g.k, g.c, images_per_block(g, t), (g.h + parts - 1) / parts);
}

}  // namespace

bool nhwc_wgrad_fits(const ConvGeom& g) {
  const Tile t = tile_of(g);
  return g.r == 3 && g.s == 3 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 1 &&
         g.pad_w == 1 && g.out_h == g.h && g.out_w == g.w && t.kt > 0 && g.w <= kMaxRow &&
         g.n > 0 && g.h > 0 && shared_bytes(g, t) <= kMaxShared;
}

std::size_t nhwc_wgrad_scratch_floats(const ConvGeom& g) {
  return std::size_t(block_images(g, tile_of(g))) * row_parts(g) * kTaps * g.k * g.c;
}

void nhwc_wgrad(const ConvGeom& g, const float* x, const float* dy, float* dw, float* scratch,
                cudaStream_t stream) {
  if (!nhwc_wgrad_fits(g)) throw Error("cuda: nhwc_wgrad called on a shape it does not take");
  const Tile t = tile_of(g);
  const int kt = t.kt, ct = t.ct;
  if (kt == 1 && ct == 1)
    launch<1, 1>(g, x, dy, scratch, stream);
  else if (kt == 1 && ct == 2)
    launch<1, 2>(g, x, dy, scratch, stream);
  else if (kt == 2 && ct == 1)
    launch<2, 1>(g, x, dy, scratch, stream);
  else if (kt == 2 && ct == 2)
    launch<2, 2>(g, x, dy, scratch, stream);
  else if (kt == 1 && ct == 4)
    launch<1, 4>(g, x, dy, scratch, stream);
  else if (kt == 4 && ct == 1)
    launch<4, 1>(g, x, dy, scratch, stream);
  else if (kt == 2 && ct == 4)
    launch<2, 4>(g, x, dy, scratch, stream);
  else if (kt == 4 && ct == 2)
    launch<4, 2>(g, x, dy, scratch, stream);
  else if (kt == 1 && ct == 8)
    launch<1, 8>(g, x, dy, scratch, stream);
  else if (kt == 8 && ct == 1)
    launch<8, 1>(g, x, dy, scratch, stream);
  else
    throw Error("cuda: nhwc_wgrad has no kernel for " + std::to_string(g.k) + " filters of " +
                std::to_string(g.c) + " channels");
  SWEEP_CHECK_CUDA(cudaGetLastError());
  const int per_image4 = kTaps * g.k * g.c / 4;
  const int blocks = (per_image4 + kReduceLanes - 1) / kReduceLanes;
  reduce_kernel<<<blocks, kReduceThreads, 0, stream>>>(scratch, block_images(g, t) * row_parts(g),
                                                       g.k, g.c, dw);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

}  // namespace sweep::trainer::cuda
