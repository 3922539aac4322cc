/*
 * crash_recovery.cpp — see crash_recovery.h. A trial under its limit is left `running` for
 * resume_sweep to requeue (it keeps its checkpoint path).
 */
#include "sweep/queue/crash_recovery.h"

#include <algorithm>
#include <optional>

#include "common/check.h"
#include "store/store.h"
#include "sweep/queue/job_attempts.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/sweep_lock.h"

namespace sweep::queue {

namespace fs = std::filesystem;

namespace {

// Where run_sweep writes the trial's checkpoint, or the path its row stores (relative to the
// sweep's directory, sweep_layout.h): the row's may only be set once the trial ends.
fs::path checkpoint_of(const fs::path& sweep_db, const TrialRow& trial) {
  return trial.checkpoint_path.empty()
             ? run::checkpoint_in(run::trial_dir_in(sweep_db.parent_path(), trial.number))
             : sweep_db.parent_path() / trial.checkpoint_path;
}

std::string numbers_text(const std::vector<std::int64_t>& numbers) {
  std::string text;
  for (std::int64_t n : numbers) text += (text.empty() ? "" : ", ") + std::to_string(n);
  return text;
}

}  // namespace

RecoveryReport recover_crashed_trials(const fs::path& sweep_db, const std::string& sweep_name,
                                      const JobRow& job, std::ostream& log) {
  RecoveryReport report;
  // Every claim before this one that was not handed back cleanly ended with its worker lost.
  const std::int64_t losses = std::max<std::int64_t>(0, attempt_number(job) - 1);
  const std::int64_t limit = trial_attempt_limit(job);
  std::error_code missing;
  if (!fs::exists(sweep_db, missing)) {
    report.losses_outside_trials = losses;
    return report;
  }
  Store store(sweep_db);
  const std::optional<SweepRow> sweep = store.find_sweep(sweep_name);
  if (!sweep) {
    report.losses_outside_trials = losses;
    return report;
  }
  std::vector<std::int64_t> hit;
  for (const TrialRow& trial : store.trials(sweep->id)) {
    if (trial.state != TrialState::running) continue;
    hit.push_back(trial.number);
    store.add_event(sweep->id, trial.id, kWorkerLostEvent,
                    "trial " + std::to_string(trial.number) +
                        " was running when the worker of job " + std::to_string(job.id) +
                        " was lost");
    const std::int64_t kills = store.count_events(sweep->id, trial.id, kWorkerLostEvent);
    if (kills >= limit) {
      const std::string error = "killed its worker " + std::to_string(kills) + " times";
      TrialUpdate update;
      update.error = error;
      store.set_trial_state(trial.id, TrialState::failed, update);
      store.add_event(sweep->id, trial.id, "failed",
                      "trial " + std::to_string(trial.number) + " failed: " + error);
      log << "trial " << trial.number << ": " << error << ": failed, the sweep goes on without it"
          << std::endl;
      ++report.failed;
    } else {
      const fs::path checkpoint = checkpoint_of(sweep_db, trial);
      log << "trial " << trial.number << " was running when the worker died (its loss " << kills
          << " of " << limit << "): it continues from "
          << (fs::exists(checkpoint) ? "its checkpoint " + checkpoint.string()
                                     : std::string("the start (no checkpoint yet)"))
          << std::endl;
      ++report.resumed;
    }
  }
  if (!hit.empty())
    store.add_event(sweep->id, std::nullopt, kWorkerLostEvent,
                    "the worker of job " + std::to_string(job.id) + " was lost while " +
                        (hit.size() == 1 ? "trial " : "trials ") + numbers_text(hit) + " ran");
  const std::int64_t in_trials = store.count_events(sweep->id, std::nullopt, kWorkerLostEvent);
  report.losses_outside_trials = std::max<std::int64_t>(0, losses - in_trials);
  return report;
}

std::string give_up_reason(const JobRow& job, const RecoveryReport& report) {
  if (report.losses_outside_trials < trial_attempt_limit(job)) return "";
  return "gave up: its worker was lost " + std::to_string(report.losses_outside_trials) +
         " times while none of its trials was running (setting the sweep up, or between "
         "trials; the workers' logs may say why)";
}

int interrupt_orphaned_trials(const fs::path& run_dir, const std::string& sweep_name,
                              const std::string& reason, std::ostream& log) {
  const fs::path db = run::database_in(run_dir);
  std::error_code missing;
  if (!fs::exists(db, missing)) return 0;
  std::optional<run::SweepLock> lock;
  try {
    lock.emplace(run::SweepLock::acquire(run_dir, sweep_name));
  } catch (const run::SweepBusy&) {
    return 0;  // its trials run in the process that holds it, which ends them itself
  }
  Store store(db);
  const std::optional<SweepRow> sweep = store.find_sweep(sweep_name);
  if (!sweep) return 0;
  int interrupted = 0;
  for (const TrialRow& trial : store.trials(sweep->id)) {
    if (trial.state != TrialState::running) continue;
    TrialUpdate update;
    update.stop_reason = reason;
    store.set_trial_state(trial.id, TrialState::interrupted, update);
    store.add_event(sweep->id, trial.id, "interrupted",
                    "trial " + std::to_string(trial.number) + " interrupted: " + reason);
    ++interrupted;
  }
  if (sweep->state == SweepState::running)
    store.set_sweep_state(sweep->id, SweepState::interrupted);
  if (interrupted > 0)
    log << interrupted << (interrupted == 1 ? " trial" : " trials")
        << " left running marked interrupted (" << reason << ")" << std::endl;
  return interrupted;
}

}  // namespace sweep::queue
