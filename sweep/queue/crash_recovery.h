/*
 * crash_recovery.h — what a worker does with a job whose previous worker was lost (killed, out of
 * memory, its lease run out) before it continues the job's sweep, and what a job that ends failed
 * leaves behind.
 *
 * Attempts are counted per trial. A trial still `running` in the sweep database when the job is
 * claimed again was running when the worker was lost (a clean stop ends trials `interrupted`), and
 * the loss is charged to it: one "worker_lost" event on the trial. A trial charged
 * trial_attempt_limit losses is taken to be what kills its worker: it is failed ("killed its
 * worker 3 times") and the rest of the sweep goes on without it. The others continue from their
 * last checkpoint (resume_sweep requeues them). Each loss that hit trials is also one
 * "worker_lost" event of the whole sweep, so the losses that hit no trial can be told apart.
 *
 * A loss while none of the job's trials ran (setting the sweep up, between two trials, before its
 * database existed) is charged to the job itself: the job is given up once trial_attempt_limit
 * of those happened, so a job that kills its worker outside any trial cannot loop for ever.
 * Nothing else ends a job for its lost workers (the store only requeues: store_jobs.cpp).
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "store/records.h"

namespace sweep::queue {

// The event kind of a worker loss, on each trial it hit and (once per loss) on the sweep.
inline constexpr const char* kWorkerLostEvent = "worker_lost";

struct RecoveryReport {
  int resumed = 0;  // trials found running that continue from their checkpoint
  int failed = 0;   // trials found running that used up their attempts
  // The job's lost workers that no running trial accounts for (none while it never lost one).
  std::int64_t losses_outside_trials = 0;
};

// Charges the latest loss of `job` (claimed again, JobRow::attempts > 1) to the trials found
// running in its sweep, fails those that used up their attempts, and counts the losses outside
// trials. A sweep database that does not exist (the job's worker died before making it) has no
// trials: every loss is outside them.
RecoveryReport recover_crashed_trials(const std::filesystem::path& sweep_db,
                                      const std::string& sweep_name, const JobRow& job,
                                      std::ostream& log);

// "" while the job goes on; else why it is given up, for the job's error: its worker was lost
// trial_attempt_limit times while none of its trials ran.
std::string give_up_reason(const JobRow& job, const RecoveryReport& report);

// For a job that ends failed: every trial of its sweep still `running` becomes `interrupted` with
// `reason` (its checkpoint kept: `sweep resume` continues it), so that a failed job never leaves a
// trial `running`. Nothing is changed while another process holds the sweep (its trials really
// run, and it ends them itself). Returns how many trials it interrupted.
int interrupt_orphaned_trials(const std::filesystem::path& run_dir, const std::string& sweep_name,
                              const std::string& reason, std::ostream& log);

}  // namespace sweep::queue
