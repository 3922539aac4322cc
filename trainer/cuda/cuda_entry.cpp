/*
 * cuda_entry.cpp — the two functions trainer/cuda_entry.h declares: the factory's door into this
 * library.
 *
 * cuda_device_count_impl never throws: a machine without a driver or GPU simply has 0 devices
 * (and the sticky "no device" error is cleared so a later CUDA call does not see it).
 */
#include "trainer/cuda_entry.h"

#include <cuda_runtime.h>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"

namespace sweep::trainer {

std::unique_ptr<Backend> make_cuda_backend(const DeviceSpec& spec) {
  int device = spec.index;
  if (device < 0) SWEEP_CHECK_CUDA(cudaGetDevice(&device));
  cuda::MathMode math = cuda::MathMode::fp32;
  switch (spec.precision) {
    case Precision::fp32:
      math = cuda::MathMode::fp32;
      break;
    case Precision::tf32:
      math = cuda::MathMode::tf32;
      break;
    case Precision::bf16:
      math = cuda::MathMode::bf16;
      break;
  }
  auto gpu = std::make_unique<cuda::CudaBackend>(device, math, spec.deterministic);
  gpu->set_overlap_weight_gradients(spec.overlap);
  gpu->set_gpu_share(spec.share);
  return gpu;
}

int cuda_device_count_impl() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace sweep::trainer
