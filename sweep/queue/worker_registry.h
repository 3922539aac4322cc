/*
 * worker_registry.h — which workers are alive, and starting a detached one when none is.
 *
 * The decision: a worker is alive exactly while it holds an flock on its lock file
 * (workers/STEM-ID.lock). The kernel drops the lock when the process dies, SIGKILL included, so
 * liveness never depends on a stale pid file or on a lease that has not expired yet (a dead
 * worker's job lease stays valid for up to --lease seconds; the next worker reclaims it then).
 * Checking and starting happen under one more flock (STEM.spawn), and a detached worker inherits
 * its lock already taken by the process that started it (the lock fd is passed down as fd 3), so
 * eight `sweep submit`s at once start exactly one worker.
 *
 * Thread safety: the functions may be called from any thread; WorkerRegistration is one object
 * per worker process.
 */
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "sweep/queue/queue_paths.h"

namespace sweep::queue {

// A file descriptor closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// An exclusive flock on workers/STEM.spawn for the object's life. Held around "is a worker
// alive? else start one" and around a worker's last look at the queue before it exits idle, so a
// job submitted at that moment is either claimed by it or sees no worker and starts one.
class SpawnLock {
 public:
  explicit SpawnLock(const QueuePaths& paths);

 private:
  UniqueFd fd_;  // closing it drops the lock
};

struct WorkerInfo {
  std::string id;       // the lock file's ID part
  sweep::Json details;  // what the worker wrote: owner, pid, host, devices, started_at
};

// Workers whose lock is held right now. Lock files left by dead workers are removed.
std::vector<WorkerInfo> alive_workers(const QueuePaths& paths);
// Whether the worker whose lease owner ("host:pid:random") is `owner` holds its lock right now.
bool worker_alive(const QueuePaths& paths, std::string_view owner);

// A worker's hold on its lock file, for the worker's whole life.
class WorkerRegistration {
 public:
  // Creates and locks a new lock file (a foreground worker).
  explicit WorkerRegistration(const QueuePaths& paths);
  // Takes over a lock already held through `inherited_fd` (a detached worker).
  WorkerRegistration(const QueuePaths& paths, int inherited_fd, std::string id);
  ~WorkerRegistration();
  WorkerRegistration(const WorkerRegistration&) = delete;
  WorkerRegistration& operator=(const WorkerRegistration&) = delete;

  const std::string& id() const { return id_; }
  // Replaces the lock file's content (one JSON object; `sweep status` shows it).
  void describe(const sweep::Json& details);
  // Drops the lock and removes the file (the worker is leaving); the destructor does the same.
  void release();

 private:
  std::filesystem::path lock_path_;
  std::string id_;
  UniqueFd fd_;
};

struct DetachedWorkerOptions {
  std::string sweep_binary;              // the `sweep` executable to run
  std::vector<std::string> worker_args;  // after `sweep worker --queue DB`: --idle-exit 60 ...
  bool only_if_none_alive = true;        // `sweep submit`: false for `sweep worker --detach`
};

// Starts `sweep worker` detached (own session, stdin /dev/null, stdout and stderr to
// workers/STEM-ID.log), unless only_if_none_alive and one is alive. Returns the new worker's ID,
// or "" when none was started.
std::string start_detached_worker(const QueuePaths& paths, const DetachedWorkerOptions& options);

// A random hex string (worker IDs, lease owners).
std::string random_hex(int digits);

}  // namespace sweep::queue
