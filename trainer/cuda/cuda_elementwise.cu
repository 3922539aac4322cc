/*
 * cuda_elementwise.cu — the CUDA backend's elementwise ops: fill, ReLU, dropout, products and sums
 * (kernels in elementwise.cuh).
 */
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/elementwise.cuh"

namespace sweep::trainer::cuda {

void CudaBackend::fill(float* x, std::size_t n, float value) {
  enter();
  cuda::fill(x, n, value, stream());
}

void CudaBackend::relu_forward(const float* x, float* y, std::size_t n) {
  enter();
  cuda::relu_forward(x, y, n, stream());
}

void CudaBackend::relu_backward(const float* y, const float* dy, float* dx, std::size_t n) {
  enter_backward({floats(y, n), floats(dy, n)}, {floats(dx, n)});
  cuda::relu_backward(y, dy, dx, n, stream());
}

void CudaBackend::dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                                  std::uint64_t seed, std::uint64_t counter) {
  enter();
  if (capturing_)
    throw Error(
        "cuda: dropout cannot be captured in a CUDA graph yet (its counter changes every "
        "step); run this model's steps eagerly");
  cuda::dropout(x, y, mask, n, p, seed, counter, stream());
}

void CudaBackend::mul(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::mul(a, b, y, n, stream());
}

void CudaBackend::add(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::add(a, b, y, n, stream());
}

void CudaBackend::add_relu(const float* a, const float* b, float* y, std::size_t n) {
  enter_backward({floats(a, n), floats(b, n)}, {floats(y, n)});
  cuda::add_relu(a, b, y, n, stream());
}

}  // namespace sweep::trainer::cuda
