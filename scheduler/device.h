/*
 * device.h — where a trial runs: a CPU or one CUDA GPU, by index, in which process of an MPI job.
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
  // The GPU's index as its own process sees it; for the CPU, which of its process's CPU slots
  // (the executor numbers them: cpu:0, cpu:1, ...).
  int index = 0;
  // The MPI rank whose process owns the device; 0 is the coordinator (and every device of a
  // sweep that is not an MPI job). A trial on rank > 0 is a remote trial (cluster/): its TrialFn
  // on this process relays it there.
  int rank = 0;

  static Device cpu(int index = 0) { return {DeviceKind::cpu, index, 0}; }
  static Device cuda(int index) { return {DeviceKind::cuda, index, 0}; }
  Device on_rank(int r) const { return {kind, index, r}; }
  bool remote() const { return rank != 0; }

  // "cpu:0", "cuda:1"; "rank2:cuda:1" on another rank — the text stored in the database and
  // shown by `sweep status`.
  std::string label() const;

  friend bool operator==(const Device&, const Device&) = default;
};

// "cuda:0" for one device, "cuda:0+1" for the GPUs of a multi-GPU trial (always of one rank:
// "rank1:cuda:0+1"): the text stored and shown.
std::string devices_label(const std::vector<Device>& devices);

}  // namespace sweep::scheduler
