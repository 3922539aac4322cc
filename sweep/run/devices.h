/*
 * devices.h — resources.execution / gpus / cpu_slots → the scheduler's devices and slot counts.
 *
 * `auto` takes every visible GPU (one trial each, or trials_per_gpu) and falls back to the CPU
 * with cpu_slots trials side by side. Asking for GPUs that are not there is an error before
 * anything runs, naming what was found, never a silent fall back to the CPU.
 */
#pragma once

#include <string>
#include <vector>

#include "scheduler/executor.h"
#include "sweep/config/config.h"

namespace sweep::run {

struct DevicePlan {
  scheduler::ExecutorOptions executor;
  std::string description;  // "cpu x2 slots (1 thread each)", "cuda:0,cuda:1"
  int gpus_per_trial = 1;   // resolved: `all` and execution multi-gpu are the selected GPUs
  int selected_gpus = 0;    // GPUs the executor has (0: CPU slots)
};

// Why the GPUs `indices` (any GPU, when empty) cannot be had here, or "": "no GPU is visible",
// "this sweep was built without the CUDA backend", "GPU 7 does not exist (1 visible: 0..0)".
// `gpu_count` and `cuda_built` as for plan_devices.
std::string missing_gpus(const std::vector<int>& indices, int gpu_count, bool cuda_built);

// `gpu_count`: visible GPUs and `cuda_built` (trainer::cuda_device_count() and
// trainer::cuda_backend_built() in production). Throws sweep::Error.
DevicePlan plan_devices(const config::ResourcesSpec& resources, int gpu_count, bool cuda_built);

// plan_devices on this machine: the trainer's visible GPU count and whether it has the CUDA
// backend, asked here so that the CLI and the queue need not reach into the trainer for them.
DevicePlan plan_local_devices(const config::ResourcesSpec& resources);

// missing_gpus on this machine, asked of the trainer as plan_local_devices does.
std::string missing_local_gpus(const std::vector<int>& indices);

// The GPUs of a trial whose parameters may set resources.gpus_per_trial (a count or "all"); the
// plan's count when they do not. Throws config::ConfigError when the plan cannot give them.
int gpus_for_trial(const DevicePlan& plan, const sweep::Json& params);

}  // namespace sweep::run
