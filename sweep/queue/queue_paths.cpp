/*
 * queue_paths.cpp — the queue's file layout. Paths are made absolute once, here, because a worker
 * changes its working directory to each job's (relative data paths resolve as in `sweep run`).
 */
#include "sweep/queue/queue_paths.h"

#include <optional>
#include <string>

#include "common/check.h"
#include "common/sweep_home.h"

namespace sweep::queue {

namespace fs = std::filesystem;

fs::path default_queue_path() {
  const std::optional<fs::path> home = sweep_home();
  if (!home)
    throw Error("neither SWEEP_HOME nor HOME is set: give the queue database with --queue PATH");
  return *home / "queue.db";
}

QueuePaths::QueuePaths(const fs::path& queue_db) : db(fs::absolute(queue_db).lexically_normal()) {
  workers_dir = db.parent_path() / "workers";
  logs_dir = db.parent_path() / "logs";
}

std::string QueuePaths::stem() const { return db.stem().string(); }

fs::path QueuePaths::job_log(std::int64_t job_id) const {
  return logs_dir / (stem() + "-job-" + std::to_string(job_id) + ".log");
}

fs::path QueuePaths::worker_lock(const std::string& worker_id) const {
  return workers_dir / (stem() + "-" + worker_id + ".lock");
}

fs::path QueuePaths::worker_log(const std::string& worker_id) const {
  return workers_dir / (stem() + "-" + worker_id + ".log");
}

fs::path QueuePaths::spawn_lock() const { return workers_dir / (stem() + ".spawn"); }

}  // namespace sweep::queue
