/*
 * nhwc_conv_bias.cu — a convolution's bias on its NHWC output and the bias gradient, the sums of
 * dy per channel (nhwc_activations.h), a template on the element type T (__nv_bfloat16 or float).
 * The gradient's sums are batch norm's (nhwc_reduce.cuh): the bits of its dbeta for the same dy.
 */
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_pack.cuh"
#include "trainer/cuda/nhwc_reduce.cuh"

namespace sweep::trainer::cuda {

namespace {

using namespace nhwc;

// Per chunk, the sums of x (the convolution bias gradient's, below).
template <class T, int P, bool kVec>
__global__ void __launch_bounds__(kThreads, kBnBlocksPerSm)
    bn_sum_kernel(const T* __restrict__ x, BnShape s, double2* __restrict__ partials) {
  const Walk w = walk_of<P>(s);
  float sum[P] = {}, unused[P] = {};
  if (w.active) for_each_value<P, kVec>(x, s, w, [&](int j, float v) { sum[j] += v; });
  write_partials<P>(sum, unused, s, partials);
}

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

// ---------------------------------------------------------------------------- launchers

// The launchers for either T; the public overloads below forward to them.
namespace generic {

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

}  // namespace generic

}  // namespace

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

}  // namespace sweep::trainer::cuda
