/*
 * sweep_argument.cpp — NAME|JOB → a sweep database (sweep_argument.h).
 */
#include "sweep/cli/sweep_argument.h"

#include <cctype>

#include "common/check.h"
#include "sweep/queue/queue.h"
#include "sweep/run/run_sweep.h"

namespace sweep::cli {

namespace fs = std::filesystem;

namespace {

bool all_digits(const std::string& text) {
  if (text.empty() || text.size() > 18) return false;  // more would not fit a job id
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

SweepPlace sweep_place(const std::string& name_or_dir, const std::string& out_dir) {
  const bool directory = name_or_dir.find('/') != std::string::npos || name_or_dir.starts_with('.');
  if (!directory) return {out_dir, name_or_dir};
  // Absolute, so that "." and "runs/q/" have a last part; ".." and "." resolved lexically.
  fs::path dir = fs::absolute(name_or_dir).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();  // a trailing '/'
  return {dir.parent_path().string(), dir.filename().string()};
}

SweepArgument resolve_sweep_argument(const std::string& target, const std::string& out_dir,
                                     const std::string& queue_path, const std::string& extra_hint) {
  const SweepPlace place = sweep_place(target, out_dir);
  const fs::path db = run::default_db_path(place.out_dir, place.name);
  if (fs::exists(db)) return {db, place.name};
  if (all_digits(target)) {
    const queue::Queue q(queue_path.empty() ? queue::default_queue_path() : fs::path(queue_path),
                         {.read_only = true});
    const queue::Job job = q.job(std::stoll(target));
    const queue::JobSweep sweep = queue::job_sweep(job.row());
    if (!fs::exists(sweep.db_path))
      throw Error("job " + target + " has not started yet (" + std::string(to_string(job.state())) +
                  "): no sweep database at " + sweep.db_path.string());
    return {sweep.db_path, sweep.name};
  }
  throw Error("no sweep database at " + db.string() + " (give --out DIR" + extra_hint + ")");
}

}  // namespace sweep::cli
