/*
 * cuda_entry.cpp — the functions trainer/cuda_entry.h declares: the factory's door into this
 * library.
 *
 * cuda_device_count_impl never throws: a machine without a driver or GPU simply has 0 devices
 * (and the sticky "no device" error is cleared so a later CUDA call does not see it).
 */
#include "trainer/cuda_entry.h"

#include <cuda_runtime.h>

#include <mutex>
#include <set>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/cuda_raii.h"

namespace sweep::trainer {

bool cuda_backend_linked() { return true; }

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

void warm_up_cuda_device(int device) {
  static std::mutex mutex;
  static std::set<int> started;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!started.insert(device).second) return;
  }
  if (cudaSetDevice(device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();  // not sticky: the backend made later reports the device's error itself
    return;
  }
  try {
    cuda::CudnnHandle dnn = cuda::make_cudnn();
    cuda::CublasHandle blas = cuda::make_cublas();
  } catch (...) {  // NOLINT(bugprone-empty-catch): reported when the backend is made
  }
}

}  // namespace sweep::trainer
