/*
 * stop_signals.cpp — the handler that writes to a pipe, and the wait on it (stop_signals.h).
 */
#include "sweep/cli/stop_signals.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <iterator>

#include "common/check.h"

namespace sweep::cli {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr char kSignalled = 's', kWoken = 'w';

std::atomic<int> g_write_end{-1};
std::atomic<int> g_received{0};

extern "C" void on_serve_stop_signal(int signal) {
  if (g_received.fetch_add(1) > 0) ::_exit(128 + signal);
  const int saved_errno = errno;  // the interrupted code's, which write() may change
  [[maybe_unused]] const ssize_t n = ::write(g_write_end.load(), &kSignalled, 1);
  errno = saved_errno;
}

}  // namespace

StopSignals::StopSignals() {
  SWEEP_CHECK_SYS(::pipe2(pipe_, O_CLOEXEC));
  g_received.store(0);
  g_write_end.store(pipe_[1]);
  struct sigaction action {};
  action.sa_handler = on_serve_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    SWEEP_CHECK_SYS(::sigaction(kSignals[i], &action, &previous_[i]));
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    SWEEP_LOG_ON_ERROR(::sigaction(kSignals[i], &previous_[i], nullptr) == 0, "sigaction(restore)");
  g_write_end.store(-1);
  for (const int fd : pipe_) SWEEP_LOG_ON_ERROR(::close(fd) == 0, "close(stop pipe)");
}

void StopSignals::quiet(const std::function<void()>& start) const {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  for (const int signal : kSignals) sigaddset(&blocked, signal);
  if (pthread_sigmask(SIG_BLOCK, &blocked, &previous) != 0)
    throw Error("cannot block SIGINT and SIGTERM for the server's threads");
  try {
    start();
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    throw;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

bool StopSignals::wait() const {
  char byte = 0;
  ssize_t n;
  do {
    n = ::read(pipe_[0], &byte, 1);
  } while (n == -1 && errno == EINTR);
  return n == 1 && byte == kSignalled;
}

void StopSignals::wake() const {
  SWEEP_LOG_ON_ERROR(::write(pipe_[1], &kWoken, 1) == 1, "write(stop pipe)");
}

}  // namespace sweep::cli
