/*
 * sigint.h — Ctrl-C for a running sweep: the first press asks for a clean stop, the second quits.
 *
 * The handler only counts (an atomic store is async-signal-safe); the run loop polls count() and
 * calls Executor::interrupt(), so trials write their checkpoints from their own threads. A second
 * Ctrl-C calls _exit(130) from the handler itself: the user asked to quit now, and nothing that
 * could hang (joining threads, SQLite) may run first. The previous handler is restored when the
 * guard goes away.
 */
#pragma once

#include <csignal>

namespace sweep::run {

class SigintGuard {
 public:
  SigintGuard();
  ~SigintGuard();
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

  static int count();  // SIGINTs received while a guard was installed

 private:
  struct sigaction previous_ {};
};

}  // namespace sweep::run
