/*
 * sweep_argument.h — the NAME|JOB argument of `sweep report` and `sweep serve`: which sweep
 * database it means.
 *
 * The decision: a NAME is OUT/NAME/sweep.db; a number that names no sweep there is taken as a
 * job id of the queue (`sweep submit`) and resolved through the job's own row to its
 * OUT/NAME/sweep.db, wherever it was submitted from. The queue is opened read-only.
 */
#pragma once

#include <filesystem>
#include <string>

namespace sweep::cli {

struct SweepArgument {
  std::filesystem::path db_path;  // exists
  std::string name;               // the sweep's name (its directory under OUT)
};

// Throws sweep::Error naming where it looked when there is no such database, and the job's state
// when a job has not started its sweep yet. `extra_hint` ends the not-found message ("" = none).
SweepArgument resolve_sweep_argument(const std::string& target, const std::string& out_dir,
                                     const std::string& queue_path,
                                     const std::string& extra_hint = "");

}  // namespace sweep::cli
