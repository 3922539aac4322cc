/*
 * device.h — where a trial runs: a CPU or one CUDA GPU, by index.
 *
 * A Device is only a name for a place; the executor turns each Device into one or more slots
 * (ExecutorOptions::cpu_slots / trials_per_gpu). The scheduler never touches CUDA itself: a TrialFn
 * picks its backend from device(), and an external command is given CUDA_VISIBLE_DEVICES.
 */
#pragma once

#include <compare>
#include <string>
#include <vector>

namespace sweep::scheduler {

enum class DeviceKind { cpu, cuda };

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  static Device cpu(int index = 0) { return {DeviceKind::cpu, index}; }
  static Device cuda(int index) { return {DeviceKind::cuda, index}; }

  // "cpu:0", "cuda:1" — the text stored in the database and shown by `sweep status`.
  std::string label() const;

  friend bool operator==(const Device&, const Device&) = default;
};

// "cuda:0" for one device, "cuda:0+1" for the GPUs of a multi-GPU trial: the text stored and shown.
std::string devices_label(const std::vector<Device>& devices);

}  // namespace sweep::scheduler
