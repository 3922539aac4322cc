/*
 * sweep_lock.h — one process owns a sweep at a time.
 *
 * `sweep resume NAME` while `sweep run` of the same sweep still trains would train the same
 * trials twice into the same checkpoints and rows. So every process that runs trials of a sweep
 * (run, resume, a queue worker's job) first takes an exclusive flock on OUT/NAME/.lock and keeps
 * it until it is done. The kernel drops the lock when the process dies (SIGKILL, OOM killer), so
 * a crashed run never leaves a stale lock: the next resume simply takes it. The file also holds a
 * line saying who has it (pid, host, command, since when), which the refused process prints.
 *
 *   SweepLock lock = SweepLock::acquire(run_dir, "quickstart");  // throws SweepBusy if held
 */
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "common/check.h"

namespace sweep::run {

// Another process holds the sweep. what() names the sweep and the holder; nothing was changed.
class SweepBusy : public Error {
 public:
  using Error::Error;
};

class SweepLock {
 public:
  // Locks `run_dir`/.lock (creating run_dir and the file). When another process holds it, waits
  // up to `wait` for it to let go (a queue worker taking over from a paused one), then throws
  // SweepBusy.
  static SweepLock acquire(const std::filesystem::path& run_dir, const std::string& sweep_name,
                           std::chrono::duration<double> wait = std::chrono::seconds(0));

  SweepLock(SweepLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  SweepLock& operator=(SweepLock&& other) noexcept;
  SweepLock(const SweepLock&) = delete;
  SweepLock& operator=(const SweepLock&) = delete;
  ~SweepLock();  // drops the lock (the file stays: removing it could race a waiting process)

  static std::filesystem::path lock_path(const std::filesystem::path& run_dir);

  // Whether a process holds `run_dir`'s lock now, read from /proc/locks without taking it (a
  // reader's test lock could make a starting resume refuse). nullopt when it cannot tell (no lock
  // file: not a sweep's directory; /proc/locks unreadable). For what `sweep show` and `list` say
  // of a sweep stored `running`: a process that died (SIGKILL, the OOM killer) left it so.
  static std::optional<bool> held(const std::filesystem::path& run_dir);

 private:
  explicit SweepLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace sweep::run
