/*
 * job_report.h — `sweep report JOB`: the HTML report of a submitted job's sweep.
 *
 * The report is the same one `sweep run` writes at the end (reports::write_report over the
 * job's OUT/NAME/sweep.db); this only resolves a job id to that database and name, so it works
 * while the job runs too (the report shows the trials so far).
 */
#pragma once

#include <filesystem>

#include "sweep/queue/queue.h"

namespace sweep::queue {

// Writes the report to `out_path` ("" = OUT/NAME/report.html beside the sweep's database) and
// returns where. Throws sweep::Error when the job has not started its sweep yet.
std::filesystem::path write_job_report(const Job& job, const std::filesystem::path& out_path = {});

}  // namespace sweep::queue
