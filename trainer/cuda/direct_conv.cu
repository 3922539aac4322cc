/*
 * direct_conv.cu — the direct convolution kernels of direct_conv.h and their launches.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/direct_conv.h"

namespace sweep::trainer::cuda {

namespace {

constexpr int kFilterTile = 8;                // KT: filters per thread (forward, backward data)
constexpr int kForwardThreads = 128;          // output positions per block
constexpr int kFilterThreads = 256;           // threads of a weight-gradient block
constexpr int kMaxParts = 64;                 // weight-gradient parts of the positions
constexpr std::size_t kMaxShared = 48 << 10;  // bytes of filters one block may keep

// The problem a forward-shaped launch solves: in (N, C, H, W) correlated with (K, C, R, R) filters
// gives out (N, K, OH, OW).
struct Problem {
  int n, c, h, w, k, oh, ow, pad_h, pad_w;
};

template <int R, bool kTransposed>
__global__ void correlate_kernel(const float* __restrict__ in, const float* __restrict__ filters,
                                 const float* __restrict__ bias, float* __restrict__ out,
                                 Problem p) {
  constexpr int kRR = R * R;
  extern __shared__ float tile[];  // (kFilterTile, C, R, R)
  const int k0 = blockIdx.y * kFilterTile;
  const int per_filter = p.c * kRR;
  for (int i = threadIdx.x; i < kFilterTile * per_filter; i += blockDim.x) {
    const int kt = i / per_filter, rest = i % per_filter, cc = rest / kRR, rs = rest % kRR;
    float v = 0.f;
    if (k0 + kt < p.k) {
      if (kTransposed) {
        // Backward data: the forward filters are (C' = p.k, K' = p.c, R, R); this problem's filter
        // k0 + kt, channel cc is the forward filter cc's channel k0 + kt, flipped.
        v = filters[(std::size_t(cc) * p.k + k0 + kt) * kRR + (kRR - 1 - rs)];
      } else {
        v = filters[(std::size_t(k0) + kt) * per_filter + rest];
      }
    }
    tile[i] = v;
  }
  __syncthreads();
  const int plane = p.oh * p.ow;
  const long long pos = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pos >= static_cast<long long>(p.n) * plane) return;
  const int nb = static_cast<int>(pos / plane), q = static_cast<int>(pos % plane);
  const int iy0 = q / p.ow - p.pad_h, ix0 = q % p.ow - p.pad_w;
  float acc[kFilterTile];
#pragma unroll
  for (int kt = 0; kt < kFilterTile; ++kt) acc[kt] = bias && k0 + kt < p.k ? bias[k0 + kt] : 0.f;
  for (int cc = 0; cc < p.c; ++cc) {
    const float* plane_in = in + (std::size_t(nb) * p.c + cc) * p.h * p.w;
    const float* filter_c = tile + cc * kRR;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int iy = iy0 + r;
      if (iy < 0 || iy >= p.h) continue;
#pragma unroll
      for (int s = 0; s < R; ++s) {
        const int ix = ix0 + s;
        if (ix < 0 || ix >= p.w) continue;
        const float v = plane_in[iy * p.w + ix];
#pragma unroll
        for (int kt = 0; kt < kFilterTile; ++kt)
          acc[kt] = fmaf(v, filter_c[kt * per_filter + r * R + s], acc[kt]);
      }
    }
  }
#pragma unroll
  for (int kt = 0; kt < kFilterTile; ++kt)
    if (k0 + kt < p.k) out[(std::size_t(nb) * p.k + k0 + kt) * plane + q] = acc[kt];
}

// Part sums of dw (K*C, parts, R*R) and db (K, parts), or dw and db themselves when parts == 1.
template <int R>
__global__ void filter_grad_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                   float* __restrict__ dw_out, float* __restrict__ db_out,
                                   ConvGeom g) {
  constexpr int kRR = R * R;
  const int kk = blockIdx.x / g.c, cc = blockIdx.x % g.c;
  const bool with_bias = db_out && cc == 0;
  float acc[kRR];
#pragma unroll
  for (int i = 0; i < kRR; ++i) acc[i] = 0.f;
  float bias_acc = 0.f;
  const int plane = g.out_h * g.out_w, positions = g.n * plane;
  const int per_part = (positions + gridDim.y - 1) / gridDim.y;
  const int first = blockIdx.y * per_part, last = min(positions, first + per_part);
  for (int pos = first + threadIdx.x; pos < last; pos += blockDim.x) {
    const int nb = pos / plane, q = pos % plane;
    const float d = dy[(std::size_t(nb) * g.k + kk) * plane + q];
    bias_acc += d;
    const int iy0 = q / g.out_w - g.pad_h, ix0 = q % g.out_w - g.pad_w;
    const float* plane_in = x + (std::size_t(nb) * g.c + cc) * g.h * g.w;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int iy = iy0 + r;
      if (iy < 0 || iy >= g.h) continue;
#pragma unroll
      for (int s = 0; s < R; ++s) {
        const int ix = ix0 + s;
        if (ix < 0 || ix >= g.w) continue;
        acc[r * R + s] = fmaf(d, plane_in[iy * g.w + ix], acc[r * R + s]);
      }
    }
  }
  __shared__ float warp_sums[kFilterThreads / 32][kRR + 1];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i <= kRR; ++i) {
    float v = i < kRR ? acc[i] : bias_acc;
    for (int off = 16; off; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) warp_sums[warp][i] = v;
  }
  __syncthreads();
  if (threadIdx.x > kRR || (threadIdx.x == kRR && !with_bias)) return;
  float v = 0.f;
  for (int j = 0; j < kFilterThreads / 32; ++j) v += warp_sums[j][threadIdx.x];
  if (threadIdx.x < kRR)
    dw_out[(std::size_t(blockIdx.x) * gridDim.y + blockIdx.y) * kRR + threadIdx.x] = v;
  else
    db_out[std::size_t(kk) * gridDim.y + blockIdx.y] = v;
}

// dw[i] = sum over parts of (K*C, parts, R*R) part sums, and db likewise from (K, parts), in order.
__global__ void sum_parts_kernel(const float* __restrict__ dw_parts,
                                 const float* __restrict__ db_parts, float* __restrict__ dw,
                                 float* __restrict__ db, int weights, int filters, int rr,
                                 int parts) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < weights) {
    const int kc = i / rr, j = i % rr;
    float v = 0.f;
    for (int q = 0; q < parts; ++q) v += dw_parts[(std::size_t(kc) * parts + q) * rr + j];
    dw[i] = v;
  } else if (db && i < weights + filters) {
    const int kk = i - weights;
    float v = 0.f;
    for (int q = 0; q < parts; ++q) v += db_parts[std::size_t(kk) * parts + q];
    db[kk] = v;
  }
}

std::size_t tile_bytes(int channels, int r) {
  return std::size_t(kFilterTile) * channels * r * r * sizeof(float);
}

template <int R, bool kTransposed>
void launch_correlate(const Problem& p, const float* in, const float* filters, const float* bias,
                      float* out, cudaStream_t stream) {
  const long long positions = static_cast<long long>(p.n) * p.oh * p.ow;
  const dim3 grid(static_cast<unsigned>((positions + kForwardThreads - 1) / kForwardThreads),
                  static_cast<unsigned>((p.k + kFilterTile - 1) / kFilterTile));
  correlate_kernel<R, kTransposed>
      <<<grid, kForwardThreads, tile_bytes(p.c, R), stream>>>(in, filters, bias, out, p);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace

bool small_conv_shape(const ConvGeom& g) {
  const std::size_t in = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t out = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  return g.stride_h == 1 && g.stride_w == 1 && g.r == g.s && (g.r == 3 || g.r == 5) &&
         g.pad_h >= 0 && g.pad_w >= 0 && g.pad_h < g.r && g.pad_w < g.s &&
         g.out_h == g.h + 2 * g.pad_h - g.r + 1 && g.out_w == g.w + 2 * g.pad_w - g.s + 1 &&
         in < (std::size_t{1} << 31) && out < (std::size_t{1} << 31);
}

bool direct_conv_fits(const ConvGeom& g) {
  return small_conv_shape(g) && tile_bytes(std::max(g.c, g.k), g.r) <= kMaxShared;
}

void direct_conv_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                         float* y, cudaStream_t stream) {
  const Problem p{g.n, g.c, g.h, g.w, g.k, g.out_h, g.out_w, g.pad_h, g.pad_w};
  if (g.r == 3)
    launch_correlate<3, false>(p, x, w, b, y, stream);
  else
    launch_correlate<5, false>(p, x, w, b, y, stream);
}

void direct_conv_backward_data(const ConvGeom& g, const float* w, const float* dy, float* dx,
                               cudaStream_t stream) {
  const Problem p{g.n, g.k, g.out_h, g.out_w, g.c, g.h, g.w, g.r - 1 - g.pad_h, g.s - 1 - g.pad_w};
  if (g.r == 3)
    launch_correlate<3, true>(p, dy, w, nullptr, dx, stream);
  else
    launch_correlate<5, true>(p, dy, w, nullptr, dx, stream);
}

int direct_conv_filter_parts(const ConvGeom& g, int sm_count) {
  const int blocks = g.k * g.c;
  return std::clamp((2 * sm_count + blocks - 1) / blocks, 1, kMaxParts);
}

std::size_t direct_conv_filter_scratch(const ConvGeom& g, int parts) {
  if (parts == 1) return 0;
  return std::size_t(parts) * (std::size_t(g.k) * g.c * g.r * g.s + g.k);
}

void direct_conv_backward_filter(const ConvGeom& g, const float* x, const float* dy, float* dw,
                                 float* db, int parts, float* scratch, cudaStream_t stream) {
  const std::size_t weights = std::size_t(g.k) * g.c * g.r * g.s;
  float* dw_out = parts == 1 ? dw : scratch;
  float* db_out = db == nullptr ? nullptr : parts == 1 ? db : scratch + weights * parts;
  const dim3 grid(static_cast<unsigned>(g.k * g.c), static_cast<unsigned>(parts));
  if (g.r == 3)
    filter_grad_kernel<3><<<grid, kFilterThreads, 0, stream>>>(x, dy, dw_out, db_out, g);
  else
    filter_grad_kernel<5><<<grid, kFilterThreads, 0, stream>>>(x, dy, dw_out, db_out, g);
  SWEEP_CHECK_LAUNCH();
  if (parts == 1) return;
  sum_filter_parts(scratch, scratch + weights * parts, dw, db, g.k, g.c, g.r * g.s, parts, stream);
}

void sum_filter_parts(const float* dw_parts, const float* db_parts, float* dw, float* db,
                      int filters, int channels, int rr, int parts, cudaStream_t stream) {
  const std::size_t weights = std::size_t(filters) * channels * rr;
  const std::size_t outputs = weights + (db ? filters : 0);
  sum_parts_kernel<<<static_cast<unsigned>((outputs + 255) / 256), 256, 0, stream>>>(
      dw_parts, db_parts, dw, db, static_cast<int>(weights), filters, rr, parts);
  SWEEP_CHECK_LAUNCH();
}

}  // namespace sweep::trainer::cuda
