// The /proc walk that finds a trial's processes (scheduler/process_tree.h) while processes come
// and go: reading the /proc files of a process that exits in between must read as "gone", never
// throw. Under load, libstdc++'s ifstream threw "basic_filebuf::underflow error reading the
// file: No such process" there and failed an external trial (seen in ./run-tests).
#include "scheduler/process_tree.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace sweep::scheduler::detail {
namespace {

TEST(ProcessTree, ProcessesThatExitWhileBeingReadAreSkippedNotThrown) {
  const std::string token = new_trial_token_entry();
  std::atomic<bool> stop{false};
  std::atomic<int> spawned{0};
  // Children of this process that exit at once and are reaped at once: the walk below keeps
  // finding /proc entries that vanish while it reads them.
  std::thread churn([&] {
    while (!stop) {
      const pid_t pid = ::fork();
      if (pid == 0) ::_exit(0);
      if (pid > 0) {
        ::waitpid(pid, nullptr, 0);
        ++spawned;
      }
    }
  });
  for (int i = 0; i < 300; ++i) EXPECT_NO_THROW(trial_processes(::getpid(), token)) << "walk " << i;
  stop = true;
  churn.join();
  EXPECT_GT(spawned.load(), 0);
}

}  // namespace
}  // namespace sweep::scheduler::detail
