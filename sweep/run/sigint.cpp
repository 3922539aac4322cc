/*
 * sigint.cpp — sigaction-installed SIGINT handler; see sigint.h for why it only counts.
 */
#include "sweep/run/sigint.h"

#include <unistd.h>

#include <atomic>

#include "common/check.h"

namespace sweep::run {

namespace {
std::atomic<int> g_sigints{0};

extern "C" void on_sigint(int) {
  if (g_sigints.fetch_add(1) >= 1) {
    static const char message[] = "\nsweep: second Ctrl-C, quitting now\n";
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(130);
  }
}
}  // namespace

SigintGuard::SigintGuard() {
  g_sigints.store(0);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  SWEEP_CHECK_SYS(::sigaction(SIGINT, &action, &previous_));
}

SigintGuard::~SigintGuard() {
  SWEEP_LOG_ON_ERROR(::sigaction(SIGINT, &previous_, nullptr) == 0, "sigaction(SIGINT, restore)");
}

int SigintGuard::count() { return g_sigints.load(); }

}  // namespace sweep::run
