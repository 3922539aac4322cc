/*
 * nhwc_elementwise.cu — ReLU (forward and backward) and the residual add (with an optional ReLU)
 * over bf16 or fp32 values of any layout (nhwc_activations.h), the fp32 kernels' formulas on
 * widened values, 16 bytes an access where the pointers allow it.
 */
#include <cstddef>

#include "common/check.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/nhwc_activations.h"
#include "trainer/cuda/nhwc_pack.cuh"

namespace sweep::trainer::cuda {

namespace {

using namespace nhwc;

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

// ---------------------------------------------------------------------------- launchers

// The launchers for either T; the public overloads below forward to them.
namespace generic {

template <class T>
void add(const T* a, const T* b, T* y, std::size_t n, bool relu, cudaStream_t stream) {
  if (relu)
    map(a, b, y, n, Add<true>{}, stream);
  else
    map(a, b, y, n, Add<false>{}, stream);
}

}  // namespace generic

}  // namespace

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

}  // namespace sweep::trainer::cuda
