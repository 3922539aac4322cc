/*
 * submitted_job.h — what a worker needs besides the config text: the directory the user submitted
 * from, and the sweep's name and output directory (so OUT/NAME/sweep.db is found from any
 * process).
 *
 * The decision: the store's jobs table has no column for these, so they travel as one last
 * comment line appended to the job's config_yaml ("# sweep-job {json}"). Appended, not prepended,
 * so that the line numbers of any config error the worker reports still match the user's file;
 * a comment, so the text is still the config exactly as it runs and the sweep stores it as such.
 */
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sweep::queue {

struct SubmittedJob {
  std::string working_dir;             // absolute: the worker runs the job from here
  std::string name;                    // the sweep's name (config name after --set / --name)
  std::string output_dir;              // as in the config (relative to working_dir when relative)
  std::vector<std::string> overrides;  // --set as given (already applied in the text)
  // --max-attempts: a trial that killed its worker this many times is failed. Stored here because
  // the job row's max_attempts grows when a worker hands the job back cleanly. 0: not recorded
  // (a job line written before it was), use the row's max_attempts - 1.
  int trial_crash_limit = 0;

  // OUT/NAME/sweep.db, absolute.
  std::filesystem::path sweep_db() const;
  std::filesystem::path run_dir() const;
};

// The config text with the job line appended.
std::string attach_job_line(const std::string& config_yaml, const SubmittedJob& job);
// The job line of a stored config_yaml; nullopt when it has none (a job enqueued by other code).
std::optional<SubmittedJob> read_job_line(const std::string& config_yaml);

}  // namespace sweep::queue
