/*
 * nhwc_activations.cu — the kernels of nhwc_activations.h, each a template on the element type T
 * (__nv_bfloat16 or float).
 *
 * Every kernel is memory-bound, so the layout of the accesses is the design: consecutive threads
 * take consecutive channels (the contiguous dimension of NHWC), and a thread moves several
 * channels in one access where the address allows it. The elementwise ops and the pooling move
 * 16 bytes (8 bf16, 4 floats), else a pair of values (4 or 8 bytes), else one. Batch norm gives a
 * thread a channel pair (4 bytes in bf16, where a pair per thread keeps a warp on whole cache lines
 * while leaving enough blocks); fp32 keeps the pair (8 bytes: a warp's row is two whole lines)
 * rather than one channel of 4 bytes, so the split over blocks, and with it the scratch and every
 * sum's order, is the same for both types. Loops read a batch of rows before using any of them, so
 * a thread's loads overlap even where an output may alias an input.
 */
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"

namespace sweep::trainer::cuda {

namespace {

using bf16 = __nv_bfloat16;

// ----------------------------------------------------------------------- loads and stores

// The element types: loads widen to float exactly; stores round bf16 to nearest even and keep
// floats as they are. Bits: what a pack holds (bf16 as its raw bits, so a pack is a plain array).
template <class T>
struct Elem;

template <>
struct Elem<bf16> {
  using Bits = unsigned short;
  static __device__ __forceinline__ float widen(Bits b) {
    return __bfloat162float(__ushort_as_bfloat16(b));
  }
  static __device__ __forceinline__ Bits narrow(float v) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
  }
};

template <>
struct Elem<float> {
  using Bits = float;
  static __device__ __forceinline__ float widen(Bits b) { return b; }
  static __device__ __forceinline__ Bits narrow(float v) { return v; }
};

// One value at a time.
__device__ __forceinline__ float widen(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float widen(float v) { return v; }

template <class T>
__device__ __forceinline__ T narrow(float v);
template <>
__device__ __forceinline__ bf16 narrow<bf16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ float narrow<float>(float v) {
  return v;
}

// Values in the widest pack: 16 bytes.
template <class T>
constexpr int kWide = int(16 / sizeof(T));

// V consecutive values moved as one access: the caller makes sure the address is aligned to the
// whole pack (sizeof(T) * V bytes).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  typename Elem<T>::Bits bits[V];
};

template <class T, int V>
__device__ __forceinline__ void load(const T* p, float (&v)[V]) {
  const Pack<T, V> k = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
  for (int j = 0; j < V; ++j) v[j] = Elem<T>::widen(k.bits[j]);
}

template <class T, int V>
__device__ __forceinline__ void store(T* p, const float (&v)[V]) {
  Pack<T, V> k;
#pragma unroll
  for (int j = 0; j < V; ++j) k.bits[j] = Elem<T>::narrow(v[j]);
  *reinterpret_cast<Pack<T, V>*>(p) = k;
}

// P values as one access (kVec) or one by one (an address not aligned for the pack).
template <int P, bool kVec, class T>
__device__ __forceinline__ void load_n(const T* p, float (&v)[P]) {
  if constexpr (kVec) {
    load<T, P>(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < P; ++j) v[j] = widen(p[j]);
  }
}

template <int P, bool kVec, class T>
__device__ __forceinline__ void store_n(T* p, const float (&v)[P]) {
  if constexpr (kVec) {
    store<T, P>(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < P; ++j) p[j] = narrow<T>(v[j]);
  }
}

bool aligned(const void* p, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

// The widest pack of T (16 bytes: kWide<T> values; else 2 values; else 1) that divides c and
// whose accesses every pointer (all T) allows.
template <class T, class... Ptr>
int pack_for(int c, Ptr... ptrs) {
  static_assert((std::is_same_v<std::remove_cv_t<std::remove_pointer_t<Ptr>>, T> && ...));
  if (c % kWide<T> == 0 && (aligned(ptrs, 16) && ...)) return kWide<T>;
  if (c % 2 == 0 && (aligned(ptrs, 2 * sizeof(T)) && ...)) return 2;
  return 1;
}

// The pooling and batch-norm kernels index with 32-bit arithmetic (a 64-bit division per element
// costs more than the memory traffic).
unsigned checked_size(const char* op, std::size_t size) {
  if (size >= (std::size_t{1} << 31))
    throw Error(std::string(op) + ": " + std::to_string(size) +
                " values is more than the CUDA kernels take (2^31)");
  return static_cast<unsigned>(size);
}

// An op's name for T's messages (literals: nothing built per launch).
template <class T>
constexpr const char* name_for(const char* bf16_name, const char* fp32_name) {
  return std::is_same_v<T, bf16> ? bf16_name : fp32_name;
}

// ------------------------------------------------------------------------------ elementwise

// The fp32 kernels' formulas (elementwise.cuh), on widened values.
struct ReluForward {
  static constexpr int kInputs = 1;
  __device__ float operator()(float x, float) const { return x <= 0.f ? 0.f : x; }  // NaN stays
};
struct ReluBackward {
  static constexpr int kInputs = 2;
  __device__ float operator()(float y, float dy) const { return y > 0.f ? dy : 0.f; }
};
template <bool kRelu>
struct Add {
  static constexpr int kInputs = 2;
  __device__ float operator()(float a, float b) const {
    const float v = __fadd_rn(a, b);  // as add_kernel: nothing contracted into the sum
    return kRelu && v <= 0.f ? 0.f : v;
  }
};

// y = op(a, b) over n values: V (16 bytes) per access where every pointer is 16-byte aligned
// (vec), the last n % V (or all, without vec) one by one. Each thread reads its values before
// writing them, so y may be a or b.
template <class T, class Op>
__global__ void __launch_bounds__(kThreads)
    map_kernel(const T* a, const T* b, T* y, std::size_t n, bool vec, Op op) {
  constexpr int V = kWide<T>;
  const std::size_t first = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t packs = vec ? n / V : 0;
  for (std::size_t k = first; k < packs; k += stride) {
    float va[V], vb[V] = {};
    load<T, V>(a + V * k, va);
    if constexpr (Op::kInputs == 2) load<T, V>(b + V * k, vb);
#pragma unroll
    for (int j = 0; j < V; ++j) va[j] = op(va[j], vb[j]);
    store<T, V>(y + V * k, va);
  }
  for (std::size_t i = V * packs + first; i < n; i += stride) {
    float vb = 0.f;
    if constexpr (Op::kInputs == 2) vb = widen(b[i]);
    y[i] = narrow<T>(op(widen(a[i]), vb));
  }
}

template <class T, class Op>
void map(const T* a, const T* b, T* y, std::size_t n, Op op, cudaStream_t stream) {
  if (!n) return;
  constexpr int V = kWide<T>;
  const bool vec = aligned(a, 16) && aligned(b, 16) && aligned(y, 16);
  map_kernel<<<grid_for(vec ? (n + V - 1) / V : n), kThreads, 0, stream>>>(a, b, y, n, vec, op);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

// ------------------------------------------------------------------------------ pooling

__device__ __forceinline__ float std_max(float a, float b) { return a < b ? b : a; }

// One thread per output pixel and pack of V channels: y = max(max(x00, x01), max(x10, x11)) with
// std::max's semantics, as maxpool2x2_forward_kernel and the CPU backend.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    maxpool_forward_kernel(const T* __restrict__ x, T* __restrict__ y, unsigned total, unsigned c,
                           unsigned h, unsigned w, unsigned out_h, unsigned out_w) {
  const unsigned packs = c / V;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, pix = o / packs;  // pix: output pixel, (ni, oh, ow)
    const unsigned ow = pix % out_w, oh = pix / out_w % out_h, ni = pix / out_w / out_h;
    const T* r0 = x + ((ni * h + 2 * oh) * w + 2 * ow) * c + ci;
    const T* r1 = r0 + w * c;
    float v00[V], v01[V], v10[V], v11[V];
    load<T, V>(r0, v00);
    load<T, V>(r0 + c, v01);
    load<T, V>(r1, v10);
    load<T, V>(r1 + c, v11);
#pragma unroll
    for (int j = 0; j < V; ++j) v00[j] = std_max(std_max(v00[j], v01[j]), std_max(v10[j], v11[j]));
    store<T, V>(y + pix * c + ci, v00);
  }
}

// One thread per window of the input rounded up ((h + 1) / 2 x (w + 1) / 2) and pack of V
// channels, writing the window's (up to) four inputs: a full window routes dy to its first
// element (row-major) equal to y, as maxpool2x2_backward_kernel (no element at all when none is
// equal: a NaN window); a window cut by the floor is a trailing odd row or column, all zeros.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    maxpool_backward_kernel(const T* __restrict__ x, const T* __restrict__ y,
                            const T* __restrict__ dy, T* __restrict__ dx, unsigned total,
                            unsigned c, unsigned h, unsigned w, unsigned out_h, unsigned out_w) {
  const unsigned packs = c / V, win_h = (h + 1) / 2, win_w = (w + 1) / 2;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, win = o / packs;
    const unsigned ww = win % win_w, wh = win / win_w % win_h, ni = win / win_w / win_h;
    const unsigned i00 = ((ni * h + 2 * wh) * w + 2 * ww) * c + ci, i10 = i00 + w * c;
    float g00[V] = {}, g01[V] = {}, g10[V] = {}, g11[V] = {};
    if (wh < out_h && ww < out_w) {
      const unsigned io = ((ni * out_h + wh) * out_w + ww) * c + ci;
      float m[V], d[V], v00[V], v01[V], v10[V], v11[V];
      load<T, V>(y + io, m);
      load<T, V>(dy + io, d);
      load<T, V>(x + i00, v00);
      load<T, V>(x + i00 + c, v01);
      load<T, V>(x + i10, v10);
      load<T, V>(x + i10 + c, v11);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const bool e0 = v00[j] == m[j], e1 = v01[j] == m[j], e2 = v10[j] == m[j],
                   e3 = v11[j] == m[j];
        g00[j] = e0 ? d[j] : 0.f;
        g01[j] = !e0 && e1 ? d[j] : 0.f;
        g10[j] = !e0 && !e1 && e2 ? d[j] : 0.f;
        g11[j] = !e0 && !e1 && !e2 && e3 ? d[j] : 0.f;
      }
    }
    const bool right = 2 * ww + 1 < w, below = 2 * wh + 1 < h;  // the window's other elements
    store<T, V>(dx + i00, g00);
    if (right) store<T, V>(dx + i00 + c, g01);
    if (below) store<T, V>(dx + i10, g10);
    if (right && below) store<T, V>(dx + i10 + c, g11);
  }
}

// One thread per (image, channel), summing its pixels in order as the CPU backend's average pool
// (cpu_pool.cpp: a float sum in window order, times 1.f / area): the same bits as the CPU on the
// NCHW tensor. Consecutive threads read consecutive channels of one pixel (coalesced).
template <class T>
__global__ void __launch_bounds__(kThreads)
    avgpool_forward_kernel(const T* __restrict__ x, float* __restrict__ y, unsigned planes,
                           unsigned c, unsigned hw, float inv_area) {
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < planes;
       o += gridDim.x * blockDim.x) {
    const unsigned ni = o / c, ci = o - ni * c;
    const T* p = x + ni * hw * c + ci;
    float sum = 0.f;
#pragma unroll 8
    for (unsigned q = 0; q < hw; ++q) sum += widen(p[q * c]);
    y[o] = sum * inv_area;
  }
}

// One thread per pixel and pack of V channels: dx = dy * (1 / area), the CPU backend's share.
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    avgpool_backward_kernel(const float* __restrict__ dy, T* __restrict__ dx, unsigned total,
                            unsigned c, unsigned hw, float inv_area) {
  const unsigned packs = c / V;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V, pix = o / packs, ni = pix / hw;
    float v[V];
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = dy[ni * c + ci + j] * inv_area;
    store<T, V>(dx + pix * c + ci, v);
  }
}

// Calls launch(integral_constant<int, V>) for pack V of T (pack_for's: kWide<T>, 2 or 1).
template <class T, class Launch>
void by_pack(int pack, Launch&& launch) {
  if (pack == kWide<T>)
    launch(std::integral_constant<int, kWide<T>>{});
  else if (pack == 2)
    launch(std::integral_constant<int, 2>{});
  else
    launch(std::integral_constant<int, 1>{});
}

// ---------------------------------------------------------------------------- batch norm

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
// kCombineLanes lanes across the chunks, the lanes added as a tree. With 792 chunks of 32
// channels, one block of 32 channels x 32 lanes adding its lanes in turn took 7 us on an H200;
// this, 4 blocks, 4 us (3 in a CUDA graph, the launch gap included).
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

BnShape bn_shape(unsigned rows, unsigned c) {
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

BnShape bn_shape(const BatchNormGeom& g) {
  return bn_shape(unsigned(g.n) * unsigned(g.hw), unsigned(std::max(g.c, 1)));
}

template <class T>
BnShape checked_bn_shape(const BatchNormGeom& g) {
  checked_size(name_for<T>("batchnorm (bf16 NHWC)", "batchnorm (fp32 NHWC)"),
               std::size_t(g.n) * std::size_t(g.hw) * std::size_t(g.c));
  return bn_shape(g);
}

// The scratch: partials (chunks x c pairs of doubles, chunk-major: a block writes, and the
// combine reads, consecutive channels), then up to four arrays of c per-channel floats (the
// normalisation's scale and shift, or the gradient's coefficients).
struct BnScratch {
  double2* partials;
  float* coef;
};

BnScratch scratch_of(const BnShape& s, float* scratch) {
  auto* partials = reinterpret_cast<double2*>(scratch);
  return {partials, reinterpret_cast<float*>(partials + std::size_t(s.chunks) * s.c)};
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
__device__ double2 combine(const double2* __restrict__ partials, const BnShape& s, unsigned ch) {
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

// y = x * scale + shift over the thread's rows (relu: then max(0, y), a NaN staying NaN), as
// normalize_kernel. y may be x.
template <int P, bool kVec, class T>
__device__ void affine(const T* x, const BnShape& s, const Walk& w, const float (&scale)[P],
                       const float (&shift)[P], bool relu, T* y) {
  for (unsigned r = w.first; r < w.end; r += kBatch * s.ty) {
    float v[kBatch][P];
    load_rows<P, kVec>(x, s, w, r, v);
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const unsigned ru = r + u * s.ty;
      if (ru >= w.end) break;
#pragma unroll
      for (int j = 0; j < P; ++j) {
        const float o = v[u][j] * scale[j] + shift[j];
        v[u][j] = relu && o <= 0.f ? 0.f : o;
      }
      store_n<P, kVec>(y + ru * s.c + w.c0, v[u]);
    }
  }
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

// Per chunk, the sums of x (the convolution bias gradient's, below).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_sum_kernel(const T* __restrict__ x, BnShape s, double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum[P] = {}, unused[P] = {};
  if (w.active) for_each_value<P, kVec>(x, s, w, [&](int j, float v) { sum[j] += v; });
  write_partials<P>(sum, unused, s, partials);
}

// Training forward, pass 1: per chunk, the sums of d = x - x0 and of d * d, x0 the channel's value
// in the first row. One read of x gives both (the mean and the squared deviations took a read
// each); the shift keeps the difference var = E[d^2] - E[d]^2 well conditioned: E[d]^2 / var is
// a sample's squared z-score, not mean^2 / var (a channel of mean 1000 and deviation 1 would lose
// every digit without it).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_moments_kernel(const T* __restrict__ x, BnShape s, double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum[P] = {}, sq[P] = {}, x0[P];
  if (w.active) {
#pragma unroll
    for (int j = 0; j < P; ++j) x0[j] = widen(x[w.c0 + j]);
    for_each_value<P, kVec>(x, s, w, [&](int j, float v) {
      const float d = v - x0[j];
      sum[j] += d;
      sq[j] = fmaf(d, d, sq[j]);
    });
  }
  write_partials<P>(sum, sq, s, partials);
}

// Its combine: the statistics, the running averages and the normalisation's scale and shift, by
// normalize_kernel's formulas.
template <class T>
__global__ void __launch_bounds__(kCombineChannels* kCombineLanes)
    bn_stats_kernel(BnShape s, const T* __restrict__ x, const double2* __restrict__ partials,
                    const float* __restrict__ gamma, const float* __restrict__ beta,
                    float* __restrict__ running_mean, float* __restrict__ running_var,
                    float* __restrict__ save_mean, float* __restrict__ save_invstd, float eps,
                    float momentum, float* __restrict__ scale, float* __restrict__ shift) {
  const unsigned ch = blockIdx.x * kCombineChannels + threadIdx.x;
  const double2 t = combine(partials, s, ch);
  if (threadIdx.y != 0 || ch >= s.c) return;
  const double count = double(s.rows), d_mean = t.x / count, mean = double(widen(x[ch])) + d_mean;
  const double sumsq = fmax(0.0, t.y - t.x * d_mean);
  const double var = sumsq / count, invstd = 1.0 / sqrt(var + double(eps));
  const double unbiased = count > 1 ? sumsq / (count - 1) : var;
  save_mean[ch] = float(mean);
  save_invstd[ch] = float(invstd);
  running_mean[ch] = float((1.0 - momentum) * running_mean[ch] + momentum * mean);
  running_var[ch] = float((1.0 - momentum) * running_var[ch] + momentum * unbiased);
  scale[ch] = float(gamma[ch] * invstd);
  shift[ch] = float(beta[ch] - mean * gamma[ch] * invstd);
}

// Pass 2: y.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_normalize_kernel(const T* x, BnShape s, const float* __restrict__ scale,
                        const float* __restrict__ shift, bool relu, T* y) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float a[P], b[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    a[j] = scale[w.c0 + j];
    b[j] = shift[w.c0 + j];
  }
  affine<P, kVec>(x, s, w, a, b, relu, y);
}

// Inference: y from the running statistics, by infer_kernel's formulas.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_infer_kernel(const T* x, BnShape s, const float* __restrict__ gamma,
                    const float* __restrict__ beta, const float* __restrict__ running_mean,
                    const float* __restrict__ running_var, float eps, bool relu, T* y) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float scale[P], shift[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    const unsigned c = w.c0 + j;
    const double invstd = 1.0 / sqrt(double(running_var[c]) + double(eps));
    scale[j] = float(gamma[c] * invstd);
    shift[j] = float(beta[c] - running_mean[c] * gamma[c] * invstd);
  }
  affine<P, kVec>(x, s, w, scale, shift, relu, y);
}

// The gradient reaching the batch norm's output through its ReLU: relu_backward's mask, 0 where
// the ReLU's output (relu_y) is not positive.
template <int P, int B>
__device__ __forceinline__ void mask_relu(const float (&relu_y)[B][P], float (&d)[B][P]) {
#pragma unroll
  for (int u = 0; u < B; ++u)
#pragma unroll
    for (int j = 0; j < P; ++j)
      if (!(relu_y[u][j] > 0.f)) d[u][j] = 0.f;
}

// A batch of rows' x and dy from row r, dy passed back through the ReLU when relu_y is given.
template <int P, bool kVec, class T>
__device__ __forceinline__ void load_grad_rows(const T* x, const T* relu_y, const T* dy,
                                               const BnShape& s, const Walk& w, unsigned r,
                                               float (&vx)[kGradBatch][P],
                                               float (&vd)[kGradBatch][P]) {
  load_rows<P, kVec>(x, s, w, r, vx);
  load_rows<P, kVec>(dy, s, w, r, vd);
  if (relu_y) {
    float vr[kGradBatch][P];
    load_rows<P, kVec>(relu_y, s, w, r, vr);
    mask_relu(vr, vd);
  }
}

// Backward, pass 1: per chunk, the sums of dy and of dy * (x - mean).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_grad_sum_kernel(const T* __restrict__ x, const T* __restrict__ relu_y,
                       const T* __restrict__ dy, BnShape s, const float* __restrict__ save_mean,
                       double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum_dy[P] = {}, sum_dy_xc[P] = {}, m[P];
  if (w.active) {
#pragma unroll
    for (int j = 0; j < P; ++j) m[j] = save_mean[w.c0 + j];
    for (unsigned r = w.first; r < w.end; r += kGradBatch * s.ty) {
      float vx[kGradBatch][P], vd[kGradBatch][P];
      load_grad_rows<P, kVec>(x, relu_y, dy, s, w, r, vx, vd);
#pragma unroll
      for (int u = 0; u < kGradBatch; ++u)
        if (r + u * s.ty < w.end) {
#pragma unroll
          for (int j = 0; j < P; ++j) {
            sum_dy[j] += vd[u][j];
            sum_dy_xc[j] = fmaf(vd[u][j], vx[u][j] - m[j], sum_dy_xc[j]);
          }
        }
    }
  }
  write_partials<P>(sum_dy, sum_dy_xc, s, partials);
}

// Its combine: dgamma, dbeta and dx's coefficients, by grad_apply_kernel's formulas:
// dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)) = a * dy + b + cx * (x - mean).
__global__ void __launch_bounds__(kCombineChannels* kCombineLanes)
    bn_grad_coef_kernel(BnShape s, const double2* __restrict__ partials,
                        const float* __restrict__ gamma, const float* __restrict__ save_invstd,
                        float* __restrict__ dgamma, float* __restrict__ dbeta,
                        float* __restrict__ coef_a, float* __restrict__ coef_b,
                        float* __restrict__ coef_cx) {
  const unsigned ch = blockIdx.x * kCombineChannels + threadIdx.x;
  const double2 t = combine(partials, s, ch);
  if (threadIdx.y != 0 || ch >= s.c) return;
  const double invstd = save_invstd[ch], count = double(s.rows);
  const double sum_dy = t.x, sum_dy_xhat = t.y * invstd;
  dgamma[ch] = float(sum_dy_xhat);
  dbeta[ch] = float(sum_dy);
  const double k = gamma[ch] * invstd;
  coef_a[ch] = float(k);
  coef_b[ch] = float(-k * (sum_dy / count));
  coef_cx[ch] = float(-k * (sum_dy_xhat / count) * invstd);
}

// Pass 2: dx. dx may be dy: a thread reads a batch's dy before writing its dx, and no other
// thread reads those elements.
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_grad_apply_kernel(const T* __restrict__ x, const T* __restrict__ relu_y, const T* dy,
                         BnShape s, const float* __restrict__ save_mean,
                         const float* __restrict__ coef_a, const float* __restrict__ coef_b,
                         const float* __restrict__ coef_cx, T* dx) {
  const Walk w = walk_of<P>(s);
  if (!w.active) return;
  float a[P], b[P], cx[P], m[P];
#pragma unroll
  for (int j = 0; j < P; ++j) {
    a[j] = coef_a[w.c0 + j];
    b[j] = coef_b[w.c0 + j];
    cx[j] = coef_cx[w.c0 + j];
    m[j] = save_mean[w.c0 + j];
  }
  for (unsigned r = w.first; r < w.end; r += kGradBatch * s.ty) {
    float vx[kGradBatch][P], vd[kGradBatch][P];
    load_grad_rows<P, kVec>(x, relu_y, dy, s, w, r, vx, vd);
#pragma unroll
    for (int u = 0; u < kGradBatch; ++u) {
      const unsigned ru = r + u * s.ty;
      if (ru >= w.end) break;
#pragma unroll
      for (int j = 0; j < P; ++j) vd[u][j] = a[j] * vd[u][j] + b[j] + cx[j] * (vx[u][j] - m[j]);
      store_n<P, kVec>(dx + ru * s.c + w.c0, vd[u]);
    }
  }
}

// ---------------------------------------------------------------------------- convolution bias

// The bias gradient is batch norm's dbeta without the ReLU: bn_sum_kernel's partials of dy (the
// same per-lane float sums, in the same order, as bn_grad_sum_kernel's), then this combine.
__global__ void __launch_bounds__(kCombineChannels* kCombineLanes)
    channel_sums_kernel(BnShape s, const double2* __restrict__ partials, float* __restrict__ sums) {
  const unsigned ch = blockIdx.x * kCombineChannels + threadIdx.x;
  const double2 t = combine(partials, s, ch);
  if (threadIdx.y == 0 && ch < s.c) sums[ch] = float(t.x);
}

// One thread per pack of V channels of a row: element o * V, channels (o % packs) * V onwards. A
// thread reads its values before writing them (y is read and written in place).
template <class T, int V>
__global__ void __launch_bounds__(kThreads)
    add_bias_kernel(T* y, const float* __restrict__ bias, unsigned total, unsigned k) {
  const unsigned packs = k / V;
  for (unsigned o = blockIdx.x * blockDim.x + threadIdx.x; o < total; o += gridDim.x * blockDim.x) {
    const unsigned ci = o % packs * V;
    float v[V];
    load<T, V>(y + std::size_t(o) * V, v);
#pragma unroll
    for (int j = 0; j < V; ++j) v[j] = __fadd_rn(v[j], bias[ci + j]);  // as Add: nothing contracted
    store<T, V>(y + std::size_t(o) * V, v);
  }
}

// rows x k values, checked as checked_size; checking rows first keeps rows * k from wrapping.
unsigned checked_rows_by_k(const char* op, std::size_t rows, int k) {
  checked_size(op, rows);
  return checked_size(op, rows * std::size_t(k));
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

dim3 grid_of(const BnShape& s) { return dim3(s.tiles, s.chunks); }
dim3 block_of(const BnShape& s) { return dim3(s.tx, s.ty); }
dim3 combine_grid(const BnShape& s) {
  return dim3((s.c + kCombineChannels - 1) / kCombineChannels);
}
dim3 combine_block() { return dim3(kCombineChannels, kCombineLanes); }

// ---------------------------------------------------------------------------- launchers

// The launchers for either T; the public overloads below forward to them.
namespace generic {

template <class T>
void batchnorm_train(const BatchNormGeom& g, const T* x, const float* gamma, const float* beta,
                     float* running_mean, float* running_var, float* save_mean, float* save_invstd,
                     T* y, bool relu, float* scratch, cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  const BnScratch t = scratch_of(s, scratch);
  float *scale = t.coef, *shift = t.coef + s.c;
  by_variant(s, pair_aligned<T>(x, y), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_moments_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(x, s, t.partials);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_stats_kernel<T><<<combine_grid(s), combine_block(), 0, stream>>>(
        s, x, t.partials, gamma, beta, running_mean, running_var, save_mean, save_invstd, g.eps,
        g.momentum, scale, shift);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_normalize_kernel<T, P, kVec>
        <<<grid_of(s), block_of(s), 0, stream>>>(x, s, scale, shift, relu, y);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void batchnorm_infer(const BatchNormGeom& g, const T* x, const float* gamma, const float* beta,
                     const float* running_mean, const float* running_var, T* y, bool relu,
                     cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  by_variant(s, pair_aligned<T>(x, y), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_infer_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(
        x, s, gamma, beta, running_mean, running_var, g.eps, relu, y);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void batchnorm_grad(const BatchNormGeom& g, const T* x, const T* relu_y, const T* dy,
                    const float* gamma, const float* save_mean, const float* save_invstd, T* dx,
                    float* dgamma, float* dbeta, float* scratch, cudaStream_t stream) {
  const BnShape s = checked_bn_shape<T>(g);
  const BnScratch t = scratch_of(s, scratch);
  float *coef_a = t.coef, *coef_b = t.coef + s.c, *coef_cx = t.coef + 2 * s.c;
  by_variant(s, pair_aligned<T>(x, relu_y, dy, dx), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_grad_sum_kernel<T, P, kVec>
        <<<grid_of(s), block_of(s), 0, stream>>>(x, relu_y, dy, s, save_mean, t.partials);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_grad_coef_kernel<<<combine_grid(s), combine_block(), 0, stream>>>(
        s, t.partials, gamma, save_invstd, dgamma, dbeta, coef_a, coef_b, coef_cx);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    bn_grad_apply_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(
        x, relu_y, dy, s, save_mean, coef_a, coef_b, coef_cx, dx);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void add_bias(T* y, const float* bias, std::size_t rows, int k, cudaStream_t stream) {
  if (k <= 0) return;
  const unsigned size = checked_rows_by_k("add_bias_nhwc", rows, k);
  if (!size) return;
  const int pack = pack_for<T>(k, y);
  const unsigned total = size / unsigned(pack);
  by_pack<T>(pack, [&](auto v) {
    add_bias_kernel<T, decltype(v)::value>
        <<<grid_for(total), kThreads, 0, stream>>>(y, bias, total, unsigned(k));
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void channel_sums(const T* dy, float* db, std::size_t rows, int k, float* scratch,
                  cudaStream_t stream) {
  if (k <= 0) return;
  checked_rows_by_k("channel_sums_nhwc", rows, k);
  const BnShape s = bn_shape(unsigned(rows), unsigned(k));
  auto* partials = reinterpret_cast<double2*>(scratch);  // the scratch is the partials alone
  // No rows still launches both: the partials are zeros and db is overwritten with them.
  by_variant(s, pair_aligned<T>(dy), [&](auto p, auto vec) {
    constexpr int P = decltype(p)::value;
    constexpr bool kVec = decltype(vec)::value;
    bn_sum_kernel<T, P, kVec><<<grid_of(s), block_of(s), 0, stream>>>(dy, s, partials);
    SWEEP_CHECK_CUDA(cudaGetLastError());
    channel_sums_kernel<<<combine_grid(s), combine_block(), 0, stream>>>(s, partials, db);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void add(const T* a, const T* b, T* y, std::size_t n, bool relu, cudaStream_t stream) {
  if (relu)
    map(a, b, y, n, Add<true>{}, stream);
  else
    map(a, b, y, n, Add<false>{}, stream);
}

template <class T>
void maxpool_forward(int n, int c, int h, int w, const T* x, T* y, cudaStream_t stream) {
  checked_size(name_for<T>("maxpool2x2 (bf16 NHWC)", "maxpool2x2 (fp32 NHWC)"),
               std::size_t(n) * c * h * w);
  const unsigned out_h = unsigned(h / 2), out_w = unsigned(w / 2);
  const int pack = pack_for<T>(c, x, y);
  const unsigned total = unsigned(n) * out_h * out_w * unsigned(c / pack);
  if (!total) return;
  by_pack<T>(pack, [&](auto v) {
    maxpool_forward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        x, y, total, unsigned(c), unsigned(h), unsigned(w), out_h, out_w);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void maxpool_backward(int n, int c, int h, int w, const T* x, const T* y, const T* dy, T* dx,
                      cudaStream_t stream) {
  checked_size(name_for<T>("maxpool2x2 (bf16 NHWC)", "maxpool2x2 (fp32 NHWC)"),
               std::size_t(n) * c * h * w);
  const unsigned out_h = unsigned(h / 2), out_w = unsigned(w / 2);
  const int pack = pack_for<T>(c, x, y, dy, dx);
  const unsigned total =
      unsigned(n) * unsigned((h + 1) / 2) * unsigned((w + 1) / 2) * unsigned(c / pack);
  if (!total) return;
  by_pack<T>(pack, [&](auto v) {
    maxpool_backward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        x, y, dy, dx, total, unsigned(c), unsigned(h), unsigned(w), out_h, out_w);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

template <class T>
void avgpool_forward(int n, int c, int hw, const T* x, float* y, cudaStream_t stream) {
  checked_size(name_for<T>("global average pool (bf16 NHWC)", "global average pool (fp32 NHWC)"),
               std::size_t(n) * c * hw);
  const unsigned planes = unsigned(n) * unsigned(c);
  if (!planes) return;
  const float inv_area = 1.f / static_cast<float>(hw);  // cpu_pool.cpp's inv_area
  avgpool_forward_kernel<T><<<grid_for(planes), kThreads, 0, stream>>>(x, y, planes, unsigned(c),
                                                                       unsigned(hw), inv_area);
  SWEEP_CHECK_CUDA(cudaGetLastError());
}

template <class T>
void avgpool_backward(int n, int c, int hw, const float* dy, T* dx, cudaStream_t stream) {
  const unsigned size = checked_size(
      name_for<T>("global average pool (bf16 NHWC)", "global average pool (fp32 NHWC)"),
      std::size_t(n) * c * hw);
  if (!size) return;
  const int pack = pack_for<T>(c, dx);
  const unsigned total = size / unsigned(pack);
  const float inv_area = 1.f / static_cast<float>(hw);
  by_pack<T>(pack, [&](auto v) {
    avgpool_backward_kernel<T, decltype(v)::value><<<grid_for(total), kThreads, 0, stream>>>(
        dy, dx, total, unsigned(c), unsigned(hw), inv_area);
    SWEEP_CHECK_CUDA(cudaGetLastError());
  });
}

}  // namespace generic

}  // namespace

std::size_t batchnorm_nhwc_scratch_floats(const BatchNormGeom& g) {
  const BnShape s = bn_shape(g);
  const std::size_t doubles = 2 * std::size_t(s.chunks) * s.c;  // partials
  return 2 * doubles + 4 * std::size_t(s.c);
}

void batchnorm_train_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, __nv_bfloat16* y, bool relu,
                          float* scratch, cudaStream_t stream) {
  generic::batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y,
                           relu, scratch, stream);
}

void batchnorm_train_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, float* running_mean, float* running_var,
                          float* save_mean, float* save_invstd, float* y, bool relu, float* scratch,
                          cudaStream_t stream) {
  generic::batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y,
                           relu, scratch, stream);
}

void batchnorm_infer_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          __nv_bfloat16* y, bool relu, cudaStream_t stream) {
  generic::batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, relu, stream);
}

void batchnorm_infer_nhwc(const BatchNormGeom& g, const float* x, const float* gamma,
                          const float* beta, const float* running_mean, const float* running_var,
                          float* y, bool relu, cudaStream_t stream) {
  generic::batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, relu, stream);
}

void batchnorm_grad_nhwc(const BatchNormGeom& g, const __nv_bfloat16* x,
                         const __nv_bfloat16* relu_y, const __nv_bfloat16* dy, const float* gamma,
                         const float* save_mean, const float* save_invstd, __nv_bfloat16* dx,
                         float* dgamma, float* dbeta, float* scratch, cudaStream_t stream) {
  generic::batchnorm_grad(g, x, relu_y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                          scratch, stream);
}

void batchnorm_grad_nhwc(const BatchNormGeom& g, const float* x, const float* relu_y,
                         const float* dy, const float* gamma, const float* save_mean,
                         const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                         float* scratch, cudaStream_t stream) {
  generic::batchnorm_grad(g, x, relu_y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                          scratch, stream);
}

void add_bias_nhwc(__nv_bfloat16* y, const float* bias, std::size_t rows, int k,
                   cudaStream_t stream) {
  generic::add_bias(y, bias, rows, k, stream);
}

void add_bias_nhwc(float* y, const float* bias, std::size_t rows, int k, cudaStream_t stream) {
  generic::add_bias(y, bias, rows, k, stream);
}

std::size_t channel_sums_nhwc_scratch_floats(std::size_t rows, int k) {
  if (k <= 0) return 0;
  checked_rows_by_k("channel_sums_nhwc", rows, k);
  const BnShape s = bn_shape(unsigned(rows), unsigned(k));
  return 4 * std::size_t(s.chunks) * s.c;  // the partials: chunks x k double2
}

void channel_sums_nhwc(const __nv_bfloat16* dy, float* db, std::size_t rows, int k, float* scratch,
                       cudaStream_t stream) {
  generic::channel_sums(dy, db, rows, k, scratch, stream);
}

void channel_sums_nhwc(const float* dy, float* db, std::size_t rows, int k, float* scratch,
                       cudaStream_t stream) {
  generic::channel_sums(dy, db, rows, k, scratch, stream);
}

void relu_forward_nhwc(const __nv_bfloat16* x, __nv_bfloat16* y, std::size_t n,
                       cudaStream_t stream) {
  map(x, static_cast<const __nv_bfloat16*>(nullptr), y, n, ReluForward{}, stream);
}

void relu_forward_nhwc(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  map(x, static_cast<const float*>(nullptr), y, n, ReluForward{}, stream);
}

void relu_backward_nhwc(const __nv_bfloat16* y, const __nv_bfloat16* dy, __nv_bfloat16* dx,
                        std::size_t n, cudaStream_t stream) {
  map(y, dy, dx, n, ReluBackward{}, stream);
}

void relu_backward_nhwc(const float* y, const float* dy, float* dx, std::size_t n,
                        cudaStream_t stream) {
  map(y, dy, dx, n, ReluBackward{}, stream);
}

void add_nhwc(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* y, std::size_t n,
              bool relu, cudaStream_t stream) {
  generic::add(a, b, y, n, relu, stream);
}

void add_nhwc(const float* a, const float* b, float* y, std::size_t n, bool relu,
              cudaStream_t stream) {
  generic::add(a, b, y, n, relu, stream);
}

void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x, __nv_bfloat16* y,
                             cudaStream_t stream) {
  generic::maxpool_forward(n, c, h, w, x, y, stream);
}

void maxpool2x2_forward_nhwc(int n, int c, int h, int w, const float* x, float* y,
                             cudaStream_t stream) {
  generic::maxpool_forward(n, c, h, w, x, y, stream);
}

void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const __nv_bfloat16* x,
                              const __nv_bfloat16* y, const __nv_bfloat16* dy, __nv_bfloat16* dx,
                              cudaStream_t stream) {
  generic::maxpool_backward(n, c, h, w, x, y, dy, dx, stream);
}

void maxpool2x2_backward_nhwc(int n, int c, int h, int w, const float* x, const float* y,
                              const float* dy, float* dx, cudaStream_t stream) {
  generic::maxpool_backward(n, c, h, w, x, y, dy, dx, stream);
}

void global_avgpool_forward_nhwc(int n, int c, int hw, const __nv_bfloat16* x, float* y,
                                 cudaStream_t stream) {
  generic::avgpool_forward(n, c, hw, x, y, stream);
}

void global_avgpool_forward_nhwc(int n, int c, int hw, const float* x, float* y,
                                 cudaStream_t stream) {
  generic::avgpool_forward(n, c, hw, x, y, stream);
}

void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, __nv_bfloat16* dx,
                                  cudaStream_t stream) {
  generic::avgpool_backward(n, c, hw, dy, dx, stream);
}

void global_avgpool_backward_nhwc(int n, int c, int hw, const float* dy, float* dx,
                                  cudaStream_t stream) {
  generic::avgpool_backward(n, c, hw, dy, dx, stream);
}

}  // namespace sweep::trainer::cuda
