/*
 * job_target.cpp — paths of a job's sweep.
 */
#include "sweep/queue/job_target.h"

namespace sweep::queue {

namespace fs = std::filesystem;

fs::path run_dir(const JobTarget& target) {
  const fs::path out(target.output_dir.empty() ? std::string("runs") : target.output_dir);
  return (out.is_absolute() ? out : fs::path(target.working_dir) / out) / target.sweep_name;
}

fs::path sweep_db(const JobTarget& target) { return run_dir(target) / "sweep.db"; }

std::optional<JobTarget> target_of(const JobRow& job) {
  if (job.target.working_dir.empty()) return std::nullopt;
  return job.target;
}

}  // namespace sweep::queue
