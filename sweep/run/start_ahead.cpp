/*
 * start_ahead.cpp — see start_ahead.h.
 */
#include "sweep/run/start_ahead.h"

#include <exception>

#include "sweep/config/expand.h"
#include "sweep/run/search_feed.h"
#include "trainer/backend/backend.h"
#include "trainer/data/load_data.h"

namespace sweep::run {

StartAhead::~StartAhead() {
  if (data_.valid()) data_.wait();
  if (device_.valid()) device_.wait();
}

void StartAhead::data(const config::SweepConfig& config) {
  if (config.trainer || data_.valid()) return;
  trainer::DataSpec spec = config.base.data;
  std::uint64_t seed = config.base.training.seed;
  if (!trials_made_as_asked(config) && config.trial_count() > 0) try {
      config::Diagnostics diagnostics;
      const config::TrialPlan plan =
          config::resolve_trial(config, config::trial_point(config, 0), diagnostics);
      if (diagnostics.error_count() > 0) return;  // the trial fails with its own message
      spec = plan.config.data;
      seed = plan.config.training.seed;
    } catch (const std::exception&) {
      return;  // as above
    }
  data_ = std::async(std::launch::async, [spec, seed] {
    try {
      trainer::load_data_shared(spec, seed);
    } catch (const std::exception&) {
      // The trial loads it again and reports why it cannot.
    }
  });
}

void StartAhead::device(const DevicePlan& plan) {
  if (device_.valid()) return;
  for (const scheduler::Device& d : plan.executor.devices)
    if (d.kind == scheduler::DeviceKind::cuda && !d.remote()) {
      trainer::DeviceSpec spec;
      spec.kind = trainer::DeviceKind::cuda;
      spec.index = d.index;
      device_ = trainer::warm_up_devices({spec});
      return;
    }
}

}  // namespace sweep::run
