/*
 * device.cpp — labels and clocks: the small text conversions the rest of the scheduler shares.
 * Labels are "kind:index" so they read the same in the database, the CLI and CUDA's own tools.
 */
#include "scheduler/device.h"

#include <chrono>
#include <string>

#include "scheduler/executor.h"
#include "scheduler/metric_point.h"
#include "scheduler/trial.h"

namespace sweep::scheduler {

std::string Device::label() const {
  return std::string(kind == DeviceKind::cuda ? "cuda:" : "cpu:") + std::to_string(index);
}

std::string Slot::label() const { return device.label() + "#" + std::to_string(slot_index); }

double wall_clock_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string_view to_string(StopKind kind) {
  switch (kind) {
    case StopKind::none:
      return "none";
    case StopKind::early_stop:
      return "early_stop";
    case StopKind::cancel:
      return "cancel";
    case StopKind::interrupt:
      return "interrupt";
    case StopKind::timeout:
      return "timeout";
  }
  return "unknown";
}

}  // namespace sweep::scheduler
