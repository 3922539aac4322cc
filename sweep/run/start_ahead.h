/*
 * start_ahead.h — what a sweep's first trials will wait for, started before the sweep's own
 * setup (finding the GPUs, the store, the plan): the first trial's data set decoded and the first
 * GPU started.
 *
 * Both are caches the trials read anyway: trainer::load_data_shared keeps a decoded data set for
 * the process (a fused array's members, and one trial after another), and warm_up_devices starts
 * a device once a process. So a guess that turns out wrong (a data key swept, a trial that fails
 * first) costs a decode on a spare thread, never a wrong result; a load that fails here is tried
 * again by the trial, which reports it. The decode takes longer than finding the GPUs and
 * writing the sweep to its store, so overlapping them brings the first step sooner. A decode
 * cannot be cut short, so what may refuse a run at once (a database that already holds the
 * sweep) is checked before one starts: `sweep run` twice says so at once, not after the decode.
 */
#pragma once

#include <future>

#include "sweep/config/config.h"
#include "sweep/run/devices.h"

namespace sweep::run {

class StartAhead {
 public:
  StartAhead() = default;
  StartAhead(const StartAhead&) = delete;
  StartAhead& operator=(const StartAhead&) = delete;
  ~StartAhead();  // waits for what was started (a decode cannot be cut short)

  // Decodes the data of the sweep's first trial (as it resolves; the base config for a search
  // that makes its trials as it goes) for a built-in trainer's sweep; nothing for an external
  // trainer.
  void data(const config::SweepConfig& config);
  // Starts the plan's first GPU, if it has one.
  void device(const DevicePlan& plan);

 private:
  std::future<void> data_, device_;
};

}  // namespace sweep::run
