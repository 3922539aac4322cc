/*
 * planned_trials.h — a sweep's trials as the executor takes them: for each stored row, its spec
 * (what it is), its function (what runs: the built-in trainer or an external command, here or,
 * under MPI, on another rank) and its paths. The run loop (run_sweep.cpp) plans the stored rows
 * it resumes or starts, and a tpe sweep's rows one at a time as it makes them.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/json.h"
#include "scheduler/trial.h"
#include "store/store.h"
#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/run/console_notices.h"
#include "sweep/run/devices.h"
#include "sweep/run/run_sweep.h"
#include "sweep/run/store_sink.h"
#include "sweep/run/trainer_trial.h"

namespace sweep::run {

// One sweep being run by this process: what it is, where it lives, how it was asked to run.
struct Execution {
  Store& store;
  const SweepRow& sweep;
  std::shared_ptr<const config::SweepConfig> config;
  const std::filesystem::path run_dir;  // OUT/NAME: trials/, report.html, .lock
  const std::string out_dir;            // OUT, for the "continue with" hint
  const RunOptions& options;
  // Ids of the trials that failed before and are retried (--retry-failed): a checkpoint of theirs
  // that cannot be used is set aside instead of failing them again (TrainerTrialInput::retried).
  const std::set<std::int64_t> retried{};
  // The trials' lines for the console, pointed at it while they run (console_notices.h).
  const std::shared_ptr<ConsoleNotices> notices = std::make_shared<ConsoleNotices>();
};

// The trials handed to the executor: spec (what it is), function (what to run), paths.
struct PlannedTrials {
  std::vector<scheduler::TrialSpec> specs;
  std::vector<scheduler::TrialFn> fns;
  std::map<std::int64_t, TrialPaths> paths;
  std::map<std::int64_t, Json> params;     // by trial id: the swept values, for the live table
  std::vector<config::TrialPoint> points;  // parallel to specs: what fused_arrays groups
  // By trial id, the built-in trainer's trials that run here (not on another rank): what a fused
  // array (trainer_array.h) trains.
  std::map<std::int64_t, TrainerTrialInput> trainer_inputs;
};

// Appends the trials of `rows` to `planned`. `resume`: a built-in trainer trial continues from its
// checkpoint when there is one.
void plan_trials(const Execution& x, const std::vector<TrialRow>& rows, bool resume,
                 const DevicePlan& devices, PlannedTrials& planned);

}  // namespace sweep::run
