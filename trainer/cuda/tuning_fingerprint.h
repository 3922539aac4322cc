/*
 * tuning_fingerprint.h — what a timed choice on a GPU holds for (trainer/tuning_cache.h): the GPU
 * model and its SMs, the driver, the CUDA runtime, cuDNN and cuBLAS, and this program's file (a
 * rebuilt program has other kernels, and times again).
 */
#pragma once

#include <string>

namespace sweep::trainer::cuda {

// The fingerprint of GPU `device` in this process (computed once a device).
const std::string& tuning_fingerprint(int device);

}  // namespace sweep::trainer::cuda
