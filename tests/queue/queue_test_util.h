/*
 * queue_test_util.h — driving the real `sweep` binary from tests: each test gets a fresh
 * directory (its queue database, runs/, configs), runs commands there to completion or in the
 * background, and reads the sweep databases through the store.
 *
 * Workers in tests use short leases and heartbeats (flags), so a killed worker's job is
 * reclaimed within seconds; every background process a test starts is killed by the fixture.
 */
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "store/store.h"

namespace sweep::queue::testing {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
  double seconds = 0;
};

// A tiny sweep on synthetic data (MLP, CPU, one trial at a time): `trials` learning rates,
// `epochs` epochs each, a checkpoint after every epoch. `train_size` and `hidden` set how long an
// epoch takes (16384 and 256: about half a second on a loaded 2-core machine). Under a sanitizer
// (SWEEP_TEST_SANITIZED) both shrink by kSanitizerShrink, so an epoch takes about as long as in a
// plain build (ThreadSanitizer makes the training loop 10-20x slower).
#if SWEEP_TEST_SANITIZED
inline constexpr int kSanitizerShrink = 4;
#else
inline constexpr int kSanitizerShrink = 1;
#endif
std::string tiny_config(const std::string& name, int trials, int epochs, int train_size = 512,
                        int hidden = 16);

class QueueDir {
 public:
  QueueDir();
  ~QueueDir();  // kills every background process it started, removes the directory
  QueueDir(const QueueDir&) = delete;
  QueueDir& operator=(const QueueDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path queue_db() const { return dir_ / "home" / "queue.db"; }
  std::string write(const std::string& file, const std::string& text) const;

  // `sweep ARGS --queue DB` in this directory, to completion (killed, a test failure and
  // exit_code -1 after `timeout`).
  CommandResult sweep(std::vector<std::string> args,
                      std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // The same without --queue (for commands that must fail before it matters, or carry it).
  CommandResult sweep_raw(const std::vector<std::string>& args,
                          std::chrono::seconds timeout = std::chrono::seconds(120)) const;
  // `sweep worker --queue DB ARGS` in the background; returns its pid.
  pid_t start_worker(std::vector<std::string> args);
  // `sweep ARGS --queue DB` in the background (`sweep logs -f`): finish() collects it.
  struct Background {
    pid_t pid = -1;
    std::filesystem::path out, err;
  };
  Background start_sweep(std::vector<std::string> args);
  // Waits for it to exit by itself: what it printed and its exit status (-1 and a test failure
  // after `timeout`, when it is killed).
  CommandResult finish(const Background& command, std::chrono::seconds timeout);
  // SIGKILL and reap.
  void kill_hard(pid_t pid);
  // Waits for a background process to exit by itself; its exit status, or -1 on timeout.
  int wait_exit(pid_t pid, std::chrono::seconds timeout);

 private:
  std::filesystem::path dir_;
  std::vector<pid_t> children_;
};

// Polls `done` every 50 ms until it is true or `timeout` passes; returns the last result.
bool eventually(const std::function<bool()>& done, std::chrono::duration<double> timeout);

// The job id submit printed (its whole stdout is the id and a newline).
std::int64_t job_id_of(const CommandResult& submit);

}  // namespace sweep::queue::testing
