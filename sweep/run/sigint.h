/*
 * sigint.h — Ctrl-C (and SIGTERM, SIGHUP) for a running sweep: the first asks for a clean stop,
 * the second quits at once.
 *
 * SIGTERM is what `timeout`, `docker stop`, Slurm's scancel and a closing terminal's SIGHUP send:
 * they get the clean stop of a first Ctrl-C (trials checkpoint and end `interrupted`, the sweep
 * can be resumed), where the default action killed sweep and left its external trainers running
 * and its trials `running` in the store. The exit status is 128 + the first signal's number.
 *
 * The handler only counts (an atomic store is async-signal-safe); the run loop polls count() and
 * calls Executor::interrupt(), so trials write their checkpoints from their own threads. A second
 * signal wakes a thread of the guard's, which kills every process of this sweep's external trials
 * (process_tree.h: what holds a token this process made, setsid'd children included) and calls
 * _exit: the user asked to quit now, and nothing that could hang (joining threads, SQLite) may
 * run first. A third signal _exits from the handler itself. The previous handlers are restored
 * when the guard goes away.
 */
#pragma once

#include <csignal>
#include <string>
#include <thread>

#include "common/check.h"

namespace sweep::run {

class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

  static int count();         // SIGINT, SIGTERM and SIGHUP received while a guard was installed
  static int first_signal();  // the first of them (0 before any)
  // How the console names the first: "Ctrl-C", "SIGTERM", "SIGHUP".
  static std::string first_signal_name();

 private:
  struct sigaction previous_[3] = {};
  int wake_[2] = {-1, -1};  // the quitter's pipe: read end, write end
  std::thread quitter_;
};

}  // namespace sweep::run
