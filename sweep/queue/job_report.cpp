/*
 * job_report.cpp — job id → sweep database → reports::write_report. The database is opened
 * read-only: a report of a running job never takes the worker's write lock.
 */
#include "sweep/queue/job_report.h"

#include "reports/report.h"
#include "sweep/run/sweep_layout.h"

namespace sweep::queue {

std::filesystem::path write_job_report(const Job& job, const std::filesystem::path& out_path) {
  const JobSweep sweep = job_sweep(job.row());
  if (!std::filesystem::exists(sweep.db_path))
    throw Error("job " + std::to_string(job.id()) + " has not started yet (" +
                std::string(to_string(job.state())) + "): no sweep database at " +
                sweep.db_path.string());
  Store store(sweep.db_path, StoreOptions{.read_only = true});
  if (!out_path.empty()) {
    reports::write_report(store, sweep.name, out_path.string());
    return out_path;
  }
  const std::filesystem::path own = run::report_in(sweep.db_path.parent_path());
  reports::write_own_report(store, sweep.name, own);
  return own;
}

}  // namespace sweep::queue
