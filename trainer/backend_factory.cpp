/*
 * backend_factory.cpp — picks the backend for a DeviceSpec.
 *
 * The CUDA backend is a separate library reached only through trainer/cuda_entry.h. Which library
 * stands behind that door is chosen when linking (trainer/cuda/ or trainer/no_cuda/), so this file
 * and every other one of the engine compile the same with or without CUDA, and a CPU-only build
 * still links and says plainly why a GPU run cannot start.
 */
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/backend/backend.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cuda_entry.h"

namespace sweep::trainer {

std::unique_ptr<Backend> make_backend(const DeviceSpec& spec) {
  switch (spec.kind) {
    case DeviceKind::cpu:
      if (spec.threads < 0)
        throw Error("cpu backend: threads must be >= 0 (0 = all cores), got " +
                    std::to_string(spec.threads));
      return std::make_unique<CpuBackend>(spec.threads);
    case DeviceKind::cuda:
      return make_cuda_backend(spec);
  }
  throw Error("unknown device kind");
}

bool cuda_backend_built() { return cuda_backend_linked(); }

int cuda_device_count() { return cuda_device_count_impl(); }

std::future<void> warm_up_devices(std::vector<DeviceSpec> devices) {
  std::vector<int> gpus;
  for (const DeviceSpec& d : devices)
    if (d.kind == DeviceKind::cuda && d.index >= 0) gpus.push_back(d.index);
  if (!gpus.empty() && cuda_backend_linked())
    return std::async(std::launch::async, [gpus] {
      for (int g : gpus) warm_up_cuda_device(g);
    });
  std::promise<void> nothing_to_start;
  nothing_to_start.set_value();
  return nothing_to_start.get_future();
}

}  // namespace sweep::trainer
