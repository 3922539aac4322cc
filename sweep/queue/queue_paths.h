/*
 * queue_paths.h — where the queue keeps its files: the database, the workers' lock and log files,
 * and one log per job.
 *
 * The decision: everything lives beside the queue database (default $SWEEP_HOME/queue.db, else
 * ~/.sweep/queue.db), and every side file's name starts with the database's stem, so two queue
 * databases in one directory (tests, --queue PATH) never see each other's workers or logs.
 */
#pragma once

#include <cstdint>
#include <filesystem>

namespace sweep::queue {

// $SWEEP_HOME/queue.db, or ~/.sweep/queue.db when SWEEP_HOME is unset or empty.
std::filesystem::path default_queue_path();

struct QueuePaths {
  std::filesystem::path db;           // the queue database
  std::filesystem::path workers_dir;  // DIR/workers: STEM-ID.lock (held while alive), STEM-ID.log
  std::filesystem::path logs_dir;     // DIR/logs: STEM-job-N.log (each job's run output)

  explicit QueuePaths(const std::filesystem::path& queue_db);
  std::filesystem::path job_log(std::int64_t job_id) const;
  std::filesystem::path worker_lock(const std::string& worker_id) const;
  std::filesystem::path worker_log(const std::string& worker_id) const;
  std::filesystem::path spawn_lock() const;  // serialises "is a worker alive? else start one"
  std::string stem() const;
};

}  // namespace sweep::queue
