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
  if (spec.precision == "tf32")
    math = cuda::MathMode::tf32;
  else if (spec.precision == "bf16")
    math = cuda::MathMode::bf16;
  else if (spec.precision != "fp32")
    throw Error("training.precision '" + spec.precision +
                "' is not supported by the CUDA backend: use fp32, tf32 or bf16");
  return std::make_unique<cuda::CudaBackend>(device, math);
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
