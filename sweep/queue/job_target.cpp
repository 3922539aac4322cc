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

std::string output_dir_problem(const fs::path& out) {
  // The nearest part of the path that exists decides: the rest is created under it.
  for (fs::path at = out; !at.empty(); at = at.parent_path()) {
    std::error_code ec;
    const fs::file_status status = fs::status(at, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      return at.string() + ": " + ec.message();
    if (fs::exists(status))
      return fs::is_directory(status) ? "" : at.string() + " is not a directory";
    if (at == at.parent_path()) break;
  }
  return "";
}

std::optional<JobTarget> target_of(const JobRow& job) {
  if (job.target.working_dir.empty()) return std::nullopt;
  return job.target;
}

}  // namespace sweep::queue
