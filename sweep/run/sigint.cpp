/*
 * sigint.cpp — the sigaction-installed handler and the thread that quits; see sigint.h for why
 * the handler only counts.
 */
#include "sweep/run/sigint.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "scheduler/process_tree.h"

namespace sweep::run {

namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<int> g_signals{0};
std::atomic<int> g_first{0};
std::atomic<int> g_wake{-1};  // the quitter's pipe's write end; -1: quit in the handler

void say(const char* text, std::size_t size) {
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text, size);
}

extern "C" void on_signal(int signal) {
  const int before = g_signals.fetch_add(1);
  if (before == 0) {
    g_first.store(signal);
    return;
  }
  const int wake = g_wake.load();
  const unsigned char quit = 1;
  const int saved_errno = errno;  // the interrupted code's, which write() may change
  if (before == 1 && wake != -1 && ::write(wake, &quit, 1) == 1) {
    errno = saved_errno;
    return;
  }
  static const char message[] = "\nsweep: quitting now\n";
  say(message, sizeof message - 1);
  ::_exit(128 + g_first.load());
}

// Waits for the second signal (a 1 on the pipe) or the guard's end (a 0, or the pipe closed).
void quit_on_second_signal(int read_end) {
  unsigned char byte = 0;
  ssize_t n;
  do {
    n = ::read(read_end, &byte, 1);
  } while (n == -1 && errno == EINTR);
  if (n != 1 || byte != 1) return;
  static const char message[] =
      "\nsweep: second signal, ending the trials' processes and quitting now\n";
  say(message, sizeof message - 1);
  try {
    scheduler::detail::kill_processes_of_our_trials();
  } catch (...) {
    // /proc unreadable: each trial's process group still dies with its pipes' reader below.
  }
  ::_exit(128 + g_first.load());
}

}  // namespace

SigintGuard::SigintGuard() {
  g_signals.store(0);
  g_first.store(0);
  if (::pipe2(wake_, O_CLOEXEC) == 0) {
    quitter_ = std::thread(quit_on_second_signal, wake_[0]);
    g_wake.store(wake_[1]);
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    SWEEP_CHECK_SYS(::sigaction(kSignals[i], &action, &previous_[i]));
}

SigintGuard::~SigintGuard() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    SWEEP_LOG_ON_ERROR(::sigaction(kSignals[i], &previous_[i], nullptr) == 0, "sigaction(restore)");
  g_wake.store(-1);
  if (quitter_.joinable()) {
    const unsigned char done = 0;
    SWEEP_LOG_ON_ERROR(::write(wake_[1], &done, 1) == 1, "write(quitter pipe)");
    quitter_.join();
  }
  for (int fd : wake_)
    if (fd != -1) SWEEP_LOG_ON_ERROR(::close(fd) == 0, "close(quitter pipe)");
}

int SigintGuard::count() { return g_signals.load(); }

int SigintGuard::first_signal() { return g_first.load(); }

std::string SigintGuard::first_signal_name() {
  switch (g_first.load()) {
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "Ctrl-C";
  }
}

}  // namespace sweep::run
