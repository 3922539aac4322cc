/*
 * crash_recovery.cpp — marks crash-looping trials failed with a message that says so; a trial
 * under the limit is left `running` for resume_sweep to requeue (it keeps its checkpoint path).
 */
#include "sweep/queue/crash_recovery.h"

#include <cstdio>

#include "common/check.h"
#include "store/store.h"
#include "sweep/run/sweep_layout.h"

namespace sweep::queue {

RecoveryReport recover_crashed_trials(const std::filesystem::path& sweep_db,
                                      const std::string& sweep_name,
                                      std::int64_t trial_attempt_limit, std::ostream& log) {
  RecoveryReport report;
  Store store(sweep_db);
  const SweepRow sweep = store.sweep_named(sweep_name);
  for (const TrialRow& trial : store.trials(sweep.id)) {
    if (trial.state != TrialState::running) continue;
    if (trial.attempts >= trial_attempt_limit) {
      const std::string error = "killed its worker " + std::to_string(trial.attempts) + " times";
      TrialUpdate update;
      update.error = error;
      store.set_trial_state(trial.id, TrialState::failed, update);
      store.add_event(sweep.id, trial.id, "failed",
                      "trial " + std::to_string(trial.number) + " failed: " + error);
      log << "trial " << trial.number << ": " << error << ": failed, the sweep goes on without it"
          << std::endl;
      ++report.failed;
    } else {
      // The row's checkpoint_path may only be set when a trial ends: look where run_sweep writes.
      // A stored path is relative to the sweep's directory (sweep_layout.h).
      const std::filesystem::path checkpoint =
          trial.checkpoint_path.empty()
              ? run::checkpoint_in(run::trial_dir_in(sweep_db.parent_path(), trial.number))
              : sweep_db.parent_path() / trial.checkpoint_path;
      log << "trial " << trial.number << " was running when the worker died (attempt "
          << trial.attempts << " of " << trial_attempt_limit << "): it continues from "
          << (std::filesystem::exists(checkpoint) ? "its checkpoint " + checkpoint.string()
                                                  : std::string("the start (no checkpoint yet)"))
          << std::endl;
      ++report.resumed;
    }
  }
  return report;
}

}  // namespace sweep::queue
