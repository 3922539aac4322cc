/*
 * devices.cpp — the choice of devices, a pure function of the config and the GPU count so that it
 * is testable on a machine without GPUs.
 */
#include "sweep/run/devices.h"

#include <algorithm>

#include "common/check.h"
#include "sweep/config/config_error.h"
#include "trainer/backend/backend.h"

namespace sweep::run {

namespace {

// A device choice that cannot work is a config error (exit 2), said before any trial starts.
[[noreturn]] void refuse(const std::string& message) { throw config::ConfigError({message}); }

}  // namespace

std::string missing_gpus(const std::vector<int>& indices, int gpu_count, bool cuda_built) {
  if (gpu_count <= 0)
    return cuda_built ? "no GPU is visible" : "this sweep was built without the CUDA backend";
  for (int index : indices)
    if (index >= gpu_count)
      return "GPU " + std::to_string(index) + " does not exist (" + std::to_string(gpu_count) +
             " visible: 0.." + std::to_string(gpu_count - 1) + ")";
  return "";
}

DevicePlan plan_devices(const config::ResourcesSpec& r, int gpu_count, bool cuda_built) {
  DevicePlan plan;
  const bool several = r.gpus_per_trial_all || r.gpus_per_trial > 1 || r.execution == "multi-gpu";
  plan.executor.cpu_slots = r.cpu_slots;
  plan.executor.trials_per_gpu = r.trials_per_gpu;
  const bool want_gpu = r.execution == "gpu" || r.execution == "multi-gpu" ||
                        (r.execution == "auto" && gpu_count > 0);
  if (!want_gpu && several)
    refuse("resources.gpus_per_trial: " +
           (r.gpus_per_trial_all ? std::string("all") : std::to_string(r.gpus_per_trial)) +
           " trains each trial on several GPUs, but " +
           (r.execution == "cpu" ? std::string("execution is cpu")
                                 : std::string("no GPU is visible")) +
           "; use gpus_per_trial: 1");
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
    refuse("resources.execution: " + r.execution + " asks for GPUs, but " +
           missing_gpus({}, gpu_count, cuda_built) + "; use execution: cpu or auto");
  plan.executor.devices.clear();
  std::vector<int> indices = r.gpus;
  if (r.all_gpus) {
    indices.clear();
    for (int i = 0; i < gpu_count; ++i) indices.push_back(i);
  }
  for (int index : indices) {
    if (index >= gpu_count)
      refuse("resources.gpus: " + missing_gpus({index}, gpu_count, cuda_built));
    plan.executor.devices.push_back(scheduler::Device::cuda(index));
    if (!plan.description.empty()) plan.description += ",";
    plan.description += "cuda:" + std::to_string(index);
  }
  if (r.trials_per_gpu > 1) plan.description += " x" + std::to_string(r.trials_per_gpu) + " each";
  const int selected = static_cast<int>(indices.size());
  plan.selected_gpus = selected;
  plan.gpus_per_trial =
      r.gpus_per_trial_all || r.execution == "multi-gpu" ? selected : r.gpus_per_trial;
  if (plan.gpus_per_trial > selected)
    refuse("resources.gpus_per_trial: " + std::to_string(plan.gpus_per_trial) + " but only " +
           std::to_string(selected) + (selected == 1 ? " GPU is" : " GPUs are") +
           " selected (gpus: " +
           (r.all_gpus ? "all on this machine" : "a list of " + std::to_string(selected)) + ")");
  if (plan.gpus_per_trial > 1)
    plan.description += ", " + std::to_string(plan.gpus_per_trial) + " GPUs per trial";
  return plan;
}

int gpus_for_trial(const DevicePlan& plan, const sweep::Json& params) {
  const auto it = params.find(config::kGpusPerTrialKey);
  if (it == params.end()) return plan.gpus_per_trial;
  if (it->is_string()) return std::max(plan.selected_gpus, 1);  // all (checked when read)
  const int gpus = it->get<int>();
  if (gpus > 1 && plan.selected_gpus == 0)
    refuse(std::string(config::kGpusPerTrialKey) + ": a trial asks for " + std::to_string(gpus) +
           " GPUs, but the sweep runs on CPU slots (no GPU is selected or visible)");
  if (gpus > plan.selected_gpus && plan.selected_gpus > 0)
    refuse(std::string(config::kGpusPerTrialKey) + ": a trial asks for " + std::to_string(gpus) +
           " GPUs, but only " + std::to_string(plan.selected_gpus) + " are selected");
  return gpus;
}

DevicePlan plan_local_devices(const config::ResourcesSpec& resources) {
  return plan_devices(resources, trainer::cuda_device_count(), trainer::cuda_backend_built());
}

std::string missing_local_gpus(const std::vector<int>& indices) {
  return missing_gpus(indices, trainer::cuda_device_count(), trainer::cuda_backend_built());
}

}  // namespace sweep::run
