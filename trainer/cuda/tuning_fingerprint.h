/*
 * tuning_fingerprint.h — what a timed choice on a GPU holds for (trainer/backend/tuning_cache.h):
 * the GPU model and its SMs, the driver, the CUDA runtime, cuDNN and cuBLAS, and this program's
 * file (a rebuilt program has other kernels, and times again); and the cache's find and put under
 * it.
 */
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace sweep::trainer::cuda {

// The fingerprint of GPU `device` in this process (computed once a device).
const std::string& tuning_fingerprint(int device);

// A choice's key as the tuning cache takes it.
template <class T, std::size_t N>
std::vector<long long> choice_key(const std::array<T, N>& key) {
  return {key.begin(), key.end()};
}

// The process's tuning cache (trainer/backend/tuning_cache.h) under GPU `device`'s fingerprint:
// what was kept of `kind` at `key`, and keeping it. Every timed choice of the CUDA backend goes
// through these two.
std::optional<std::vector<double>> kept_choice(int device, const char* kind,
                                               const std::vector<long long>& key);
void keep_choice(int device, const char* kind, const std::vector<long long>& key,
                 const std::vector<double>& value);

}  // namespace sweep::trainer::cuda
