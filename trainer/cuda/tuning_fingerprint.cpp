/*
 * tuning_fingerprint.cpp — see tuning_fingerprint.h.
 */
#include "trainer/cuda/tuning_fingerprint.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "common/check.h"
#include "trainer/backend/tuning_cache.h"

namespace sweep::trainer::cuda {

namespace {

// This program's path, size and modification time; empty when /proc is not there.
std::string program_stamp() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const auto size = fs::file_size(exe, ec);
  if (ec) return {};
  const auto time = fs::last_write_time(exe, ec);
  if (ec) return {};
  return exe.string() + ':' + std::to_string(size) + ':' +
         std::to_string(time.time_since_epoch().count());
}

}  // namespace

const std::string& tuning_fingerprint(int device) {
  static std::mutex mutex;
  static std::map<int, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(device); it != known.end()) return it->second;
  cudaDeviceProp prop{};
  SWEEP_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  SWEEP_CHECK_CUDA(cudaDriverGetVersion(&driver));
  SWEEP_CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  int blas[3] = {0, 0, 0};
  SWEEP_CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &blas[0]));
  SWEEP_CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &blas[1]));
  SWEEP_CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &blas[2]));
  const std::string fingerprint =
      std::string(prop.name) + " sm" + std::to_string(prop.major) + std::to_string(prop.minor) +
      " x" + std::to_string(prop.multiProcessorCount) + " driver " + std::to_string(driver) +
      " cuda " + std::to_string(runtime) + " cudnn " + std::to_string(cudnnGetVersion()) +
      " cublas " + std::to_string(blas[0]) + "." + std::to_string(blas[1]) + "." +
      std::to_string(blas[2]) + " program " + program_stamp();
  return known.emplace(device, fingerprint).first->second;
}

std::optional<std::vector<double>> kept_choice(int device, const char* kind,
                                               const std::vector<long long>& key) {
  return tuning_cache().find(tuning_fingerprint(device), kind, key);
}

void keep_choice(int device, const char* kind, const std::vector<long long>& key,
                 const std::vector<double>& value) {
  tuning_cache().put(tuning_fingerprint(device), kind, key, value);
}

}  // namespace sweep::trainer::cuda
