/*
 * nhwc_wgrad.cu — the kernels of nhwc_wgrad.h.
 *
 * A block takes a part of one image's rows. For each row p it needs rows p - 1, p, p + 1 of x (each
 * with a zero column either side, and zeros for rows outside the image, kept in a ring of three
 * staged rows) and row p of dy in shared memory; warp t (one per tap r, s) then adds dy^T (K x
 * positions) times x shifted by the tap (positions x C) to its K x C accumulators, eight positions
 * per WMMA step. The positions of a row are padded to a multiple of 8 with zero dy, so they add
 * nothing.
 */
#include <mma.h>

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

// Shared-memory rows (a position's channels, or its filters) are padded by 8 floats: a WMMA tile
// load reads 8 or 16 such rows, which unpadded (C a multiple of 32) all start in one bank. Eight
// keeps every row start 32-byte aligned, as WMMA's loads need.
constexpr int kRowPad = 8;

std::size_t shared_bytes(const ConvGeom& g, int rows_per_step) {
  const int row = padded_row(g.w);
  return (std::size_t(rows_per_step + 2) * (row + 2) * (g.c + kRowPad) +
          std::size_t(rows_per_step) * row * (g.k + kRowPad)) *
         sizeof(float);
}

constexpr std::size_t kMaxShared = 96 * 1024;

// Rows a step. More rows between two barriers measured slower: 4 rows a step took 198 us at 32
// channels of 32x32, batch 256, against 147-154 us for 1 (H200; the larger staging leaves fewer
// blocks on each SM).
int rows_per_step(const ConvGeom&) { return 1; }

// Float4 i of rows of `width` floats (i / (width / 4): the row), stored in rows of `stride`.
__device__ __forceinline__ void put(float* base, int stride, int width, int i, float4 v) {
  *reinterpret_cast<float4*>(base + (i / (width / 4)) * stride + i % (width / 4) * 4) = v;
}

template <class Frag>
__device__ void to_tf32(Frag& f) {
#pragma unroll
  for (int i = 0; i < f.num_elements; ++i) f.x[i] = wmma::__float_to_tf32(f.x[i]);
}

// KT, CT: tiles of 16 along K and C. Block (n, part) takes rows [part * rows, (part + 1) * rows)
// of image n, `rows_per_step` of them a step (staged x and dy rows give the warps that many rows
// of products between two barriers). The x rows a step needs live in a ring of rows_per_step + 2
// staged rows: each step stages the next step's new x rows and dy rows, loaded into registers
// before this step's products (so the loads overlap them) and stored after.
template <int KT, int CT>
__global__ void __launch_bounds__(kTaps * 32)
    wgrad_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                 float* __restrict__ partial, int h, int w, int rows_per_part, int rows_per_step) {
  constexpr int K = KT * 16, C = CT * 16;
  constexpr int kPrefetch = 8;  // float4s a thread holds between the load and the store
  constexpr int LX = C + kRowPad, LD = K + kRowPad;  // shared row strides
  extern __shared__ __align__(32) float smem[];
  const int row = (w + 7) / 8 * 8, staged = row + 2;  // positions of dy, of a staged x row
  const int R = rows_per_step, ring = R + 2;
  float* xs = smem;                       // ring [ring][staged][LX]
  float* ds = smem + ring * staged * LX;  // [R][row][LD]
  const int n = blockIdx.x, tap = threadIdx.x / 32, r = tap / 3, s = tap % 3;
  const int p0 = blockIdx.y * rows_per_part, p1 = min(h, p0 + rows_per_part);
  const int x4 = staged * (C / 4), d4 = row * (K / 4);  // float4s of a staged x row, a dy row

  // x row y (zeros outside the image) as float4 i of a staged row; dy row p likewise (zeros past
  // the part: those rows are another block's).
  const auto x_at = [&](int y, int i) {
    const int c4 = i % (C / 4), col = i / (C / 4) - 1;
    if (y < 0 || y >= h || col < 0 || col >= w) return make_float4(0.f, 0.f, 0.f, 0.f);
    return reinterpret_cast<const float4*>(x + ((std::size_t(n) * h + y) * w + col) * C)[c4];
  };
  const auto dy_at = [&](int p, int i) {
    const int k4 = i % (K / 4), q = i / (K / 4);
    if (p >= p1 || q >= w) return make_float4(0.f, 0.f, 0.f, 0.f);
    return reinterpret_cast<const float4*>(dy + ((std::size_t(n) * h + p) * w + q) * K)[k4];
  };
  const auto slot = [ring](int y) { return ((y % ring) + ring) % ring; };

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[KT][CT];
#pragma unroll
  for (int i = 0; i < KT; ++i)
#pragma unroll
    for (int j = 0; j < CT; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  // Rows p0 - 1 and p0 of x; the step at p0's other rows go through the stores below.
  for (int y = p0 - 1; y <= p0; ++y)
    for (int i = threadIdx.x; i < x4; i += blockDim.x)
      put(xs + slot(y) * staged * LX, LX, C, i, x_at(y, i));
  // The step at p stages x rows p + 1 .. p + R and dy rows p .. p + R - 1: float4 i of them. A
  // thread's (j-th: i = threadIdx.x + j * blockDim.x) are held in registers (constant indices)
  // between the load and the store; a tail past kPrefetch of them is copied directly.
  float4 held[kPrefetch];
  const int xs4 = R * x4, total = R * (x4 + d4);
  const auto fetch = [&](int p, int i) {
    return i < xs4 ? x_at(p + 1 + i / x4, i % x4) : dy_at(p + (i - xs4) / d4, (i - xs4) % d4);
  };
  const auto place = [&](int p, int i, float4 v) {
    if (i < xs4)
      put(xs + slot(p + 1 + i / x4) * staged * LX, LX, C, i % x4, v);
    else
      put(ds + (i - xs4) / d4 * row * LD, LD, K, (i - xs4) % d4, v);
  };
  const auto load = [&](int p) {
#pragma unroll
    for (int j = 0; j < kPrefetch; ++j) {
      const int i = threadIdx.x + j * blockDim.x;
      if (i < total) held[j] = fetch(p, i);
    }
  };
  const auto store = [&](int p) {
#pragma unroll
    for (int j = 0; j < kPrefetch; ++j) {
      const int i = threadIdx.x + j * blockDim.x;
      if (i < total) place(p, i, held[j]);
    }
    for (int i = threadIdx.x + kPrefetch * blockDim.x; i < total; i += blockDim.x)
      place(p, i, fetch(p, i));
  };
  if (p0 < p1) {
    load(p0);
    store(p0);
  }
  for (int p = p0; p < p1; p += R) {
    __syncthreads();  // the step's rows staged
    if (p + R < p1) load(p + R);
    for (int ri = 0; ri < R && p + ri < p1; ++ri) {
      const float* xr = xs + slot(p + ri + r - 1) * staged * LX;
      const float* dr = ds + ri * row * LD;
      for (int m0 = 0; m0 < row; m0 += 8) {
        // A (16 x 8): dy^T, element (k, m) at dr[(m0 + m) * LD + k]: column-major with ld LD.
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::col_major> a[KT];
#pragma unroll
        for (int i = 0; i < KT; ++i) {
          wmma::load_matrix_sync(a[i], dr + m0 * LD + i * 16, LD);
          to_tf32(a[i]);
        }
#pragma unroll
        for (int j = 0; j < CT; ++j) {
          // B (8 x 16): x at tap (r, s), element (m, c) at xr[(m0 + m + s) * LX + c]: row-major.
          wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
          wmma::load_matrix_sync(b, xr + (m0 + s) * LX + j * 16, LX);
          to_tf32(b);
#pragma unroll
          for (int i = 0; i < KT; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
        }
      }
    }
    __syncthreads();  // the step's readers are done with dy and with the slots the next reuses
    if (p + R < p1) store(p + R);
  }
  // The part's partial: [tap][K][C].
  float* out = partial + ((std::size_t(n) * gridDim.y + blockIdx.y) * kTaps + tap) * K * C;
#pragma unroll
  for (int i = 0; i < KT; ++i)
#pragma unroll
    for (int j = 0; j < CT; ++j)
      wmma::store_matrix_sync(out + i * 16 * C + j * 16, acc[i][j], C, wmma::mem_row_major);
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
  const int rows = rows_per_step(g);
  const std::size_t smem = shared_bytes(g, rows);
  static_assert(KT * CT <= kMaxFragments);
  if (smem > 48 * 1024)
    SWEEP_CHECK_CUDA(cudaFuncSetAttribute(wgrad_kernel<KT, CT>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const int parts = row_parts(g);
  wgrad_kernel<KT, CT><<<dim3(g.n, parts), kTaps * 32, smem, stream>>>(
      x, dy, scratch, g.h, g.w, (g.h + parts - 1) / parts, rows);
}

}  // namespace

bool nhwc_wgrad_fits(const ConvGeom& g) {
  const auto power_of_two = [](int v) { return v > 0 && (v & (v - 1)) == 0; };
  return g.r == 3 && g.s == 3 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 1 &&
         g.pad_w == 1 && g.out_h == g.h && g.out_w == g.w && g.c % 16 == 0 && g.k % 16 == 0 &&
         power_of_two(g.k / 16) && power_of_two(g.c / 16) &&
         (g.k / 16) * (g.c / 16) <= kMaxFragments && g.w <= kMaxRow && g.n > 0 && g.h > 0 &&
         shared_bytes(g, 1) <= kMaxShared;
}

std::size_t nhwc_wgrad_scratch_floats(const ConvGeom& g) {
  return std::size_t(g.n) * row_parts(g) * kTaps * g.k * g.c;
}

void nhwc_wgrad(const ConvGeom& g, const float* x, const float* dy, float* dw, float* scratch,
                cudaStream_t stream) {
  if (!nhwc_wgrad_fits(g)) throw Error("cuda: nhwc_wgrad called on a shape it does not take");
  const int kt = g.k / 16, ct = g.c / 16;
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
  reduce_kernel<<<blocks, kReduceThreads, 0, stream>>>(scratch, g.n * row_parts(g), g.k, g.c, dw);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

}  // namespace sweep::trainer::cuda
