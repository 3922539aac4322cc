/*
 * stop_signals.h — Ctrl-C and SIGTERM for a command that serves until told to stop
 * (`sweep serve`): the first ends wait(), a second quits at once.
 *
 * The non-obvious decisions:
 *  - A handler, not sigwait alone: a signal sent to the process goes to any thread that does not
 *    block it, and libraries start threads of their own before main (OpenBLAS's pool) that block
 *    nothing. A signal only blocked in our threads, sent while the waiting thread is not inside
 *    sigwait, goes to one of those, and its default action kills the process (no clean stop).
 *  - The handler only writes a byte to a pipe (async-signal-safe, keeping errno); wait() reads
 *    it. Threads started inside quiet() block both signals, so no wait of theirs is interrupted.
 *  - A second signal quits at once (_exit(128 + signal)): the user asked twice.
 *
 * Thread safety: one StopSignals at a time; wake() from any thread.
 */
#pragma once

#include <csignal>
#include <functional>

namespace sweep::cli {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Runs `start` with SIGINT and SIGTERM blocked in this thread, so the threads it starts block
  // them too.
  void quiet(const std::function<void()>& start) const;
  // Until Ctrl-C or SIGTERM comes (true) or wake() is called (false).
  bool wait() const;
  void wake() const;

 private:
  struct sigaction previous_[2] = {};
  int pipe_[2] = {-1, -1};  // read end, write end
};

}  // namespace sweep::cli
