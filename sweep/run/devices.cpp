/*
 * devices.cpp — the choice of devices, a pure function of the config and the GPU count so that it
 * is testable on a machine without GPUs.
 */
#include "sweep/run/devices.h"

#include "common/check.h"

namespace sweep::run {

DevicePlan plan_devices(const config::ResourcesSpec& r, int gpu_count, bool cuda_built) {
  DevicePlan plan;
  plan.executor.cpu_slots = r.cpu_slots;
  plan.executor.trials_per_gpu = r.trials_per_gpu;
  const bool want_gpu = r.execution == "gpu" || r.execution == "multi-gpu" ||
                        (r.execution == "auto" && gpu_count > 0);
  if (r.execution == "multi-gpu")
    throw Error(
        "resources.execution: multi-gpu (one trial data-parallel over several GPUs) is "
        "not supported yet: use gpu (one trial per GPU)");
  if (!want_gpu) {
    plan.executor.devices = {scheduler::Device::cpu()};
    plan.description =
        "cpu x" + std::to_string(r.cpu_slots) + (r.cpu_slots == 1 ? " slot" : " slots") +
        (r.cpu_threads > 0 ? " (" + std::to_string(r.cpu_threads) +
                                 (r.cpu_threads == 1 ? " thread" : " threads") + " each)"
                           : std::string());
    return plan;
  }
  if (gpu_count <= 0)
    throw Error("resources.execution: " + r.execution + " asks for GPUs, but " +
                (cuda_built ? std::string("no GPU is visible")
                            : std::string("this sweep was built without the CUDA backend")) +
                "; use execution: cpu or auto");
  plan.executor.devices.clear();
  std::vector<int> indices = r.gpus;
  if (r.all_gpus) {
    indices.clear();
    for (int i = 0; i < gpu_count; ++i) indices.push_back(i);
  }
  for (int index : indices) {
    if (index >= gpu_count)
      throw Error("resources.gpus: GPU " + std::to_string(index) + " does not exist (" +
                  std::to_string(gpu_count) + " visible: 0.." + std::to_string(gpu_count - 1) +
                  ")");
    plan.executor.devices.push_back(scheduler::Device::cuda(index));
    if (!plan.description.empty()) plan.description += ",";
    plan.description += "cuda:" + std::to_string(index);
  }
  if (r.trials_per_gpu > 1) plan.description += " x" + std::to_string(r.trials_per_gpu) + " each";
  return plan;
}

}  // namespace sweep::run
