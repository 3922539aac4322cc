/*
 * cuda_scratch.cu — the CUDA backend's grow-only scratch buffers for one op's temporaries: the
 * channels-last copies of operands and the float partial sums (grow() keeps a replaced buffer
 * alive while a recorded graph may still read it).
 */
#include "trainer/cuda/cuda_backend.h"

namespace sweep::trainer::cuda {

void* CudaBackend::nhwc_scratch(std::size_t bytes) {
  return grow(nhwc_scratch_, bytes, "channels-last scratch");
}

float* CudaBackend::scratch_floats(DeviceMemory& m, std::size_t n) {
  return static_cast<float*>(grow(m, n * sizeof(float), "scratch"));
}

}  // namespace sweep::trainer::cuda
