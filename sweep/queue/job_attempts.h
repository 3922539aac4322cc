/*
 * job_attempts.h — a job's attempts in the user's terms, for `sweep status JOB` and the job log.
 *
 * The store counts claims (JobRow::attempts) beside a budget (JobRow::max_attempts) that is
 * --max-attempts + 1 and grows by one whenever a worker hands the job back cleanly (SIGTERM,
 * Ctrl-C: no attempt spent), so the two together tell clean hand-backs from lost workers.
 * Neither number is what the user set ("attempt 1 of 4" with the default --max-attempts 3 reads
 * as a mistake); these say it the user's way. What the losses cost is counted per trial
 * (crash_recovery.h).
 */
#pragma once

#include <cstdint>
#include <string>

#include "store/records.h"

namespace sweep::queue {

// The --max-attempts the job was submitted with (a trial that kills its worker this many times is
// failed); JobRow::max_attempts - 1 for a job whose submitter did not record it.
std::int64_t trial_attempt_limit(const JobRow& job);

// Claims of the job, not counting clean hand-backs: 1 on the first run, +1 after each lost worker.
std::int64_t attempt_number(const JobRow& job);

// "attempt 1"; while the job is queued or running after its workers died: "attempt 3 (2 workers
// lost; a trial that kills its worker 3 times is failed)".
std::string attempt_text(const JobRow& job);

}  // namespace sweep::queue
