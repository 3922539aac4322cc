/*
 * scatter_dgrad.cu — the data-gradient kernel of scatter_dgrad.h, its block plan and launch.
 */
#include <algorithm>
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/staging.cuh"

namespace sweep::trainer::cuda {

namespace {

constexpr int kRy = 2;              // dy rows of a thread's patch
constexpr int kPx = 4;              // dy columns of a thread's patch
constexpr int kMaxChannels = 4;     // input channels a block takes at most
constexpr int kBlockThreads = 256;  // a block's threads, about (its images fill it)
constexpr int kMaxThreads = 512;
constexpr int kMaxSlices = 8;  // slices of the filters a block's threads split at most
int max_images = 0;            // scatter_dgrad_max_images

// dy (N, K, OH, OW) spread through the filters (K, C, R, R) into dx (N, C, H, W). A block takes
// `cb` channels of `nb` images; a thread one patch of one image for one channel and one slice of
// the filters (the slices' windows are added with the rest).
struct Scatter {
  int n, c, h, w, k, oh, ow, pad_h, pad_w;
  int rb, segs, per;    // dy's row blocks (kRy rows) and segments (kPx columns); their product,
                        // the threads of one image and channel
  int cb, cgroups;      // channels a block, blocks along the channels
  int nb, nblocks;      // images a block, blocks along the images
  int slices, kper;     // slices of the filters, filters a slice
  int threads, stride;  // a block's threads; floats between two threads' windows (odd: no bank
                        // conflicts when each writes its own)
  std::size_t smem;     // bytes
};

constexpr int taps_padded(int r) { return (r * r + 3) / 4 * 4; }  // a channel's taps, float4s
constexpr int window_floats(int r) { return (kRy + r - 1) * (kPx + r - 1); }

Scatter problem(const ConvGeom& g) {
  Scatter t{};
  t.n = g.n, t.c = g.c, t.h = g.h, t.w = g.w, t.k = g.k, t.oh = g.out_h, t.ow = g.out_w;
  t.pad_h = g.pad_h, t.pad_w = g.pad_w;
  return t;
}

// Plans the blocks; false when they cannot fit.
bool plan(Scatter& t, int r, int sm_count) {
  t.rb = (t.oh + kRy - 1) / kRy;
  t.segs = (t.ow + kPx - 1) / kPx;
  t.per = t.rb * t.segs;
  if (t.per > kMaxThreads) return false;
  t.cb = std::clamp(kBlockThreads / t.per, 1, std::min(kMaxChannels, t.c));
  t.cgroups = (t.c + t.cb - 1) / t.cb;
  // Where one thread per patch and channel gives the GPU few warps (a small batch on a whole GPU:
  // LeNet's second layer at batch 64 has 10k such threads, 2.4 warps an SM), the filters are split
  // among slices of threads, for about 512 threads an SM.
  const std::size_t patches = std::size_t(t.n) * t.cgroups * t.cb * t.per;
  const std::size_t wanted = std::size_t(sm_count) * 512;
  t.slices = static_cast<int>(std::clamp<std::size_t>(
      wanted / patches, 1,
      std::min<std::size_t>({kMaxSlices, std::size_t(t.k),
                             std::size_t(std::max(1, kBlockThreads / (t.cb * t.per)))})));
  t.kper = (t.k + t.slices - 1) / t.slices;
  t.slices = (t.k + t.kper - 1) / t.kper;
  // Images a block: enough blocks for about two per SM, at least two warps a block where the
  // images allow, at most about kBlockThreads threads.
  const int group = t.cb * t.per * t.slices;  // threads of one image
  const int most = std::max(1, kBlockThreads / group);
  const int least = std::min(most, (64 + group - 1) / group);
  const std::size_t pairs = std::size_t(t.n) * t.cgroups, blocks = 2 * std::size_t(sm_count);
  t.nb = static_cast<int>(std::clamp<std::size_t>((pairs + blocks - 1) / blocks, least, most));
  if (max_images > 0) t.nb = std::min(t.nb, max_images);
  t.nb = std::min(t.nb, t.n);
  t.nblocks = (t.n + t.nb - 1) / t.nb;
  t.threads = t.nb * group;
  t.stride = window_floats(r) | 1;
  // The weights during the products, then the same memory for the threads' windows.
  const std::size_t weights = std::size_t(t.k) * t.cb * taps_padded(r);
  const std::size_t windows = std::size_t(t.threads) * t.stride;
  t.smem = std::max(weights, windows) * sizeof(float);
  // FastDiv splits indices below 2^21: the staged weights and a block's dx values.
  const std::size_t outputs = std::size_t(t.nb) * t.cb * t.h * t.w;
  return t.smem <= kMaxSharedBytes && t.threads <= kMaxThreads && outputs < (1u << 21);
}

template <int R>
__global__ void __launch_bounds__(kMaxThreads)
    scatter_dgrad_kernel(const float* __restrict__ w, const float* __restrict__ dy,
                         float* __restrict__ dx, Scatter t) {
  constexpr int kRR = R * R, kRRp = taps_padded(R);
  constexpr int kWh = kRy + R - 1, kWw = kPx + R - 1;  // a patch's window in dx
  extern __shared__ float4 shared4[];
  float* weights = reinterpret_cast<float*>(shared4);  // (K, cb, kRRp)
  float* windows = weights;                            // after the products: (threads, stride)
  const int n0 = blockIdx.x * t.nb, c0 = blockIdx.y * t.cb;
  const int tid = threadIdx.x;
  const int per_k = t.cb * kRRp;
  const FastDiv by_k(per_k);
  stage(
      t.k * per_k,
      [&](int e) {
        const int k = by_k(e), j = e - k * per_k, cl = j / kRRp, rs = j - cl * kRRp;
        const int c = c0 + cl;
        return rs < kRR && c < t.c ? w[(std::size_t(k) * t.c + c) * kRR + rs] : 0.f;
      },
      [&](int e, float v) { weights[e] = v; });
  __syncthreads();

  // This thread's patch: dy rows oy0.. and columns ox0.. of image n, spread for channel c0 + cl
  // through filters k_begin..k_end.
  const int per_slice = t.nb * t.cb * t.per;
  const int slice = tid / per_slice, in_slice = tid - slice * per_slice;
  const int pt = in_slice % t.per, rest = in_slice / t.per;
  const int cl = rest % t.cb, i = rest / t.cb;
  const int k_begin = slice * t.kper, k_end = min(t.k, k_begin + t.kper);
  const int n = n0 + i;
  const int oy0 = (pt / t.segs) * kRy, ox0 = (pt % t.segs) * kPx;
  const std::size_t plane = std::size_t(t.oh) * t.ow;
  const float* src = dy + std::size_t(min(n, t.n - 1)) * t.k * plane + oy0 * t.ow + ox0;
  unsigned valid = 0;  // bit ry * kPx + px: the position lies in dy (and the image in the batch)
#pragma unroll
  for (int ry = 0; ry < kRy; ++ry)
#pragma unroll
    for (int px = 0; px < kPx; ++px)
      if (n < t.n && oy0 + ry < t.oh && ox0 + px < t.ow) valid |= 1u << (ry * kPx + px);
  const auto load = [&](float(&d)[kRy][kPx], int k) {
    const float* p = src + k * plane;
#pragma unroll
    for (int ry = 0; ry < kRy; ++ry)
#pragma unroll
      for (int px = 0; px < kPx; ++px)
        d[ry][px] = valid >> (ry * kPx + px) & 1u ? __ldg(p + ry * t.ow + px) : 0.f;
  };
  float acc[kWh][kWw];
#pragma unroll
  for (int a = 0; a < kWh; ++a)
#pragma unroll
    for (int b = 0; b < kWw; ++b) acc[a][b] = 0.f;
  float d[kRy][kPx];
  load(d, k_begin);
  const float* mine_w = weights + cl * kRRp;
  for (int k = k_begin; k < k_end; ++k) {
    float next[kRy][kPx];  // the next filter's patch, loading during this one's products
    load(next, min(k + 1, k_end - 1));
    float tap[kRRp];
    const float4* w4 = reinterpret_cast<const float4*>(mine_w + std::size_t(k) * per_k);
#pragma unroll
    for (int q = 0; q < kRRp / 4; ++q) {
      const float4 v = w4[q];
      tap[4 * q] = v.x, tap[4 * q + 1] = v.y, tap[4 * q + 2] = v.z, tap[4 * q + 3] = v.w;
    }
#pragma unroll
    for (int ry = 0; ry < kRy; ++ry)
#pragma unroll
      for (int px = 0; px < kPx; ++px)
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int s = 0; s < R; ++s)
            acc[ry + r][px + s] = fmaf(d[ry][px], tap[r * R + s], acc[ry + r][px + s]);
#pragma unroll
    for (int ry = 0; ry < kRy; ++ry)
#pragma unroll
      for (int px = 0; px < kPx; ++px) d[ry][px] = next[ry][px];
  }
  __syncthreads();  // every thread is done with the weights: their memory takes the windows
  float* mine = windows + std::size_t(tid) * t.stride;
#pragma unroll
  for (int a = 0; a < kWh; ++a)
#pragma unroll
    for (int b = 0; b < kWw; ++b) mine[a * kWw + b] = acc[a][b];
  __syncthreads();

  // Each dx value: the windows covering it, slices, then patch rows, then columns in order.
  // Window (b, j) starts at dx row b * kRy - pad_h and column j * kPx - pad_w.
  const int hw = t.h * t.w, per_image = t.cb * hw, total = t.nb * per_image;
  const FastDiv by_image(per_image), by_plane(hw), by_row(t.w);
  for (int e = tid; e < total; e += blockDim.x) {
    const int ii = by_image(e), rem = e - ii * per_image, cc = by_plane(rem), yx = rem - cc * hw;
    const int iy = by_row(yx), ix = yx - iy * t.w;
    const int nn = n0 + ii, c = c0 + cc;
    if (nn >= t.n || c >= t.c) continue;
    const int y = iy + t.pad_h, x = ix + t.pad_w;  // in the coordinates of window (0, 0)
    const int b_lo = y >= kWh ? (y - kWh + kRy) / kRy : 0, b_hi = min(t.rb - 1, y / kRy);
    const int j_lo = x >= kWw ? (x - kWw + kPx) / kPx : 0, j_hi = min(t.segs - 1, x / kPx);
    float sum = 0.f;
    for (int q = 0; q < t.slices; ++q) {
      const float* image =
          windows + (std::size_t(q) * per_slice + std::size_t(ii * t.cb + cc) * t.per) * t.stride;
      for (int b = b_lo; b <= b_hi; ++b)
        for (int j = j_lo; j <= j_hi; ++j)
          sum +=
              image[std::size_t(b * t.segs + j) * t.stride + (y - b * kRy) * kWw + (x - j * kPx)];
    }
    dx[(std::size_t(nn) * t.c + c) * hw + yx] = sum;
  }
}

template <int R>
void launch(const Scatter& t, const float* w, const float* dy, float* dx, cudaStream_t stream) {
  allow_shared_memory<scatter_dgrad_kernel<R>>();
  const dim3 grid(static_cast<unsigned>(t.nblocks), static_cast<unsigned>(t.cgroups));
  scatter_dgrad_kernel<R><<<grid, t.threads, t.smem, stream>>>(w, dy, dx, t);
  SWEEP_CHECK_LAUNCH();
}

// Planned for one SM, a block takes the most images it can (fewer SMs, more images a block), so
// a shape that fits so fits for every GPU and share.
constexpr int kFitSms = 1;

}  // namespace

bool scatter_dgrad_fits(const ConvGeom& g) {
  if (!small_conv_shape(g)) return false;
  Scatter t = problem(g);
  return plan(t, g.r, kFitSms);
}

int scatter_dgrad_sms(const ConvGeom& g, int sm_count, int order_sm_count) {
  Scatter a = problem(g), b = problem(g);
  return plan(a, g.r, sm_count) && plan(b, g.r, order_sm_count) && a.kper == b.kper &&
                 a.slices == b.slices
             ? sm_count
             : order_sm_count;
}

void scatter_dgrad(const ConvGeom& g, const float* w, const float* dy, float* dx, int sm_count,
                   cudaStream_t stream) {
  Scatter t = problem(g);
  if (!plan(t, g.r, sm_count)) throw Error("scatter data gradient: the shape does not fit");
  if (g.r == 3)
    launch<3>(t, w, dy, dx, stream);
  else
    launch<5>(t, w, dy, dx, stream);
}

void scatter_dgrad_max_images(int images) { max_images = images; }

}  // namespace sweep::trainer::cuda
