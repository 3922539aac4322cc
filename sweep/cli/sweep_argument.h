/*
 * sweep_argument.h — the NAME|JOB argument of `sweep report` and `sweep serve`: which sweep
 * database it means.
 *
 * The decision: a NAME is OUT/NAME/sweep.db; a number that names no sweep there is taken as a
 * job id of the queue (`sweep submit`) and resolved through the job's own row to its
 * OUT/NAME/sweep.db, wherever it was submitted from. The queue is opened read-only.
 *
 * Every command that takes a sweep's NAME also takes its directory, as a shell completes it
 * (runs/quickstart/, ., /data/runs/quickstart): an argument that holds a '/' or starts with '.'
 * is one, as no sweep name does (config.cpp's is_safe_name); its last part is the name and the
 * directory above it OUT.
 */
#pragma once

#include <filesystem>
#include <string>

namespace sweep::cli {

struct SweepPlace {
  std::string out_dir, name;
};

// `name_or_dir` as OUT and NAME: a name is under `out_dir`; a directory names both.
SweepPlace sweep_place(const std::string& name_or_dir, const std::string& out_dir);

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
