/*
 * backend_factory.cpp — picks the backend for a DeviceSpec.
 *
 * The CUDA backend is a separate library reached only through trainer/cuda_entry.h, and only when
 * the build defines SWEEP_HAVE_CUDA; a CPU-only build still links and says plainly why a GPU run
 * cannot start, instead of failing somewhere deeper.
 */
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/backend.h"
#include "trainer/cpu/cpu_backend.h"
#if SWEEP_HAVE_CUDA
#include "trainer/cuda_entry.h"
#endif

namespace sweep::trainer {

std::unique_ptr<Backend> make_backend(const DeviceSpec& spec) {
  switch (spec.kind) {
    case DeviceKind::cpu:
      if (spec.threads < 0)
        throw Error("cpu backend: threads must be >= 0 (0 = all cores), got " +
                    std::to_string(spec.threads));
      return std::make_unique<CpuBackend>(spec.threads);
    case DeviceKind::cuda:
#if SWEEP_HAVE_CUDA
      return make_cuda_backend(spec);
#else
      throw Error("this build has no CUDA backend (configured with SWEEP_WITH_CUDA=OFF)");
#endif
  }
  throw Error("unknown device kind");
}

bool cuda_backend_built() {
#if SWEEP_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#if SWEEP_HAVE_CUDA
  return cuda_device_count_impl();
#else
  return 0;
#endif
}

std::future<void> warm_up_devices(std::vector<DeviceSpec> devices) {
  std::vector<int> gpus;
  for (const DeviceSpec& d : devices)
    if (d.kind == DeviceKind::cuda && d.index >= 0) gpus.push_back(d.index);
#if SWEEP_HAVE_CUDA
  if (!gpus.empty())
    return std::async(std::launch::async, [gpus] {
      for (int g : gpus) warm_up_cuda_device(g);
    });
#endif
  std::promise<void> nothing_to_start;
  nothing_to_start.set_value();
  return nothing_to_start.get_future();
}

}  // namespace sweep::trainer
