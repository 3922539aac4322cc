/*
 * job_target.h — where a queued job's sweep runs and goes, from the job's own columns
 * (JobTarget in store/records.h: the submit directory, the sweep's name, its output directory).
 *
 * The decision: OUT/NAME/sweep.db is found from the job row alone, in any process, so `status`,
 * `fetch` and a worker that picks the job up after a crash all reach the same sweep.
 */
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "store/records.h"

namespace sweep::queue {

// OUT/NAME, absolute: the output directory relative to the submit directory unless absolute.
std::filesystem::path run_dir(const JobTarget& target);
// OUT/NAME/sweep.db, absolute.
std::filesystem::path sweep_db(const JobTarget& target);

// Why sweeps cannot go under the output directory `out` (absolute), or "": a file that is not a
// directory where it or one of its parents would be ("F is not a directory"). Checked at submit,
// so the job is refused there rather than failing later in its worker.
std::string output_dir_problem(const std::filesystem::path& out);

// The job's target, or nullopt for a job enqueued by other code (no submit directory recorded).
std::optional<JobTarget> target_of(const JobRow& job);

}  // namespace sweep::queue
