/*
 * device.cpp — labels and clocks: the small text conversions the rest of the scheduler shares.
 * Labels are "kind:index" so they read the same in the database, the CLI and CUDA's own tools.
 */
#include "scheduler/device.h"

#include <chrono>
#include <iterator>
#include <string>

#include "scheduler/executor.h"
#include "scheduler/metric_point.h"
#include "scheduler/trial.h"

namespace sweep::scheduler {

std::string Device::label() const {
  return (rank != 0 ? "rank" + std::to_string(rank) + ":" : std::string()) +
         (kind == DeviceKind::cuda ? "cuda:" : "cpu:") + std::to_string(index);
}

std::string devices_label(const std::vector<Device>& devices) {
  std::string text;
  for (const Device& d : devices) {
    if (text.empty()) {
      text = d.label();
    } else {
      text += '+';
      text += std::to_string(d.index);
    }
  }
  return text;
}

std::string Slot::label() const { return device.label() + "#" + std::to_string(slot_index); }

double wall_clock_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

namespace {
constexpr Word<StopKind> kStopKinds[] = {{StopKind::none, "none"},
                                         {StopKind::early_stop, "early_stop"},
                                         {StopKind::cancel, "cancel"},
                                         {StopKind::interrupt, "interrupt"},
                                         {StopKind::timeout, "timeout"}};
}  // namespace

Words<StopKind> words_of(StopKind) { return {kStopKinds, std::size(kStopKinds)}; }
std::string_view to_string(StopKind kind) { return name_of(kind); }

}  // namespace sweep::scheduler
