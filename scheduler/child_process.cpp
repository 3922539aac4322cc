/*
 * child_process.cpp — posix_spawnp with pipes, a new process group and default signal handling.
 *
 * posix_spawn reports failure as a returned error number, not -1/errno; posix_result() converts,
 * so every call still goes through SWEEP_CHECK_SYS. Pipes are created O_CLOEXEC: another trial
 * spawning at the same moment on another thread must not inherit our write ends (it would keep
 * our pipe open, and we would never see EOF).
 */
#include "scheduler/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/check.h"
#include "scheduler/process_tree.h"

extern char** environ;

namespace sweep::scheduler::detail {

namespace {

int posix_result(int error_number) {
  if (error_number == 0) return 0;
  errno = error_number;
  return -1;
}

int unless_gone(int result) { return result == -1 && errno == ESRCH ? 0 : result; }

// RAII for the spawn attribute / file-action objects.
struct SpawnAttributes {
  posix_spawnattr_t value;
  SpawnAttributes() { SWEEP_CHECK_SYS(posix_result(posix_spawnattr_init(&value))); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&value); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
};
struct SpawnFileActions {
  posix_spawn_file_actions_t value;
  SpawnFileActions() { SWEEP_CHECK_SYS(posix_result(posix_spawn_file_actions_init(&value))); }
  ~SpawnFileActions() { posix_spawn_file_actions_destroy(&value); }
  SpawnFileActions(const SpawnFileActions&) = delete;
  SpawnFileActions& operator=(const SpawnFileActions&) = delete;
};

std::pair<FileDescriptor, FileDescriptor> make_pipe() {
  int fds[2];
  SWEEP_CHECK_SYS(::pipe2(fds, O_CLOEXEC));
  return {FileDescriptor(fds[0]), FileDescriptor(fds[1])};
}

}  // namespace

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

void FileDescriptor::reset() noexcept {
  if (fd_ >= 0) SWEEP_LOG_ON_ERROR(::close(fd_) == 0 || errno == EINTR, "close");
  fd_ = -1;
}

std::string ExitStatus::describe() const {
  if (exited) return "exited with code " + std::to_string(code);
  const char* name = ::strsignal(signal);
  return "killed by signal " + std::to_string(signal) +
         (name ? std::string(" (") + name + ")" : "");
}

std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string text = *entry;
    const std::string key = text.substr(0, text.find('='));
    if (!overrides.contains(key)) entries.push_back(text);
  }
  for (const auto& [key, value] : overrides) entries.push_back(key + "=" + value);
  return entries;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::vector<std::string>& environment,
                           const std::string& working_dir) {
  if (argv.empty()) throw Error("command: empty argv");
  auto [stdout_read, stdout_write] = make_pipe();
  auto [stderr_read, stderr_write] = make_pipe();

  SpawnFileActions actions;
  SWEEP_CHECK_SYS(
      posix_result(posix_spawn_file_actions_addopen(&actions.value, 0, "/dev/null", O_RDONLY, 0)));
  SWEEP_CHECK_SYS(
      posix_result(posix_spawn_file_actions_adddup2(&actions.value, stdout_write.get(), 1)));
  SWEEP_CHECK_SYS(
      posix_result(posix_spawn_file_actions_adddup2(&actions.value, stderr_write.get(), 2)));
  if (!working_dir.empty())
    SWEEP_CHECK_SYS(
        posix_result(posix_spawn_file_actions_addchdir_np(&actions.value, working_dir.c_str())));

  // Own process group (a stop reaches the program's children too); signals back to default and
  // unblocked, whatever this process does with them (tests and the CLI block or ignore some).
  SpawnAttributes attributes;
  sigset_t defaults, empty;
  SWEEP_CHECK_SYS(::sigemptyset(&empty));
  SWEEP_CHECK_SYS(::sigemptyset(&defaults));
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGQUIT, SIGXFSZ})
    SWEEP_CHECK_SYS(::sigaddset(&defaults, sig));
  SWEEP_CHECK_SYS(posix_result(posix_spawnattr_setpgroup(&attributes.value, 0)));
  SWEEP_CHECK_SYS(posix_result(posix_spawnattr_setsigdefault(&attributes.value, &defaults)));
  SWEEP_CHECK_SYS(posix_result(posix_spawnattr_setsigmask(&attributes.value, &empty)));
  SWEEP_CHECK_SYS(posix_result(posix_spawnattr_setflags(
      &attributes.value, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)));

  std::vector<char*> argv_pointers;
  for (const auto& word : argv) argv_pointers.push_back(const_cast<char*>(word.c_str()));
  argv_pointers.push_back(nullptr);
  // The trial's token rides in the environment of every descendant (process_tree.h).
  token_ = new_trial_token_entry();
  std::vector<char*> env_pointers;
  for (const auto& entry : environment) env_pointers.push_back(const_cast<char*>(entry.c_str()));
  env_pointers.push_back(const_cast<char*>(token_.c_str()));
  env_pointers.push_back(nullptr);

  pid_t pid = -1;
  try {
    SWEEP_CHECK_SYS(
        posix_result(posix_spawnp(&pid, argv[0].c_str(), &actions.value, &attributes.value,
                                  argv_pointers.data(), env_pointers.data())));
  } catch (const CallError& e) {
    throw Error("command: cannot start '" + argv[0] + "'" +
                (working_dir.empty() ? "" : " in " + working_dir) + ": " + e.detail());
  }
  pid_ = pid;
  stdout_ = std::move(stdout_read);
  stderr_ = std::move(stderr_read);
  // Write ends close here (end of scope): the child holds the only copies, so EOF means it is done.
  SWEEP_CHECK_SYS(::fcntl(stdout_.get(), F_SETFL, O_NONBLOCK));
  SWEEP_CHECK_SYS(::fcntl(stderr_.get(), F_SETFL, O_NONBLOCK));
}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0) return;
  // Always clear the group and the rest of the tree: a finished program's leftover children
  // (setsid, double-forked daemons included) must not outlive the trial.
  SWEEP_LOG_ON_ERROR(unless_gone(::killpg(pid_, SIGKILL)) == 0, "killpg(SIGKILL)");
  try {
    signal_trial(reaped_ ? -1 : pid_, token_, SIGKILL);
  } catch (...) {
    // /proc unreadable: the process group was still cleared.
  }
  if (reaped_) return;
  int status = 0;
  pid_t result;
  do {
    result = ::waitpid(pid_, &status, 0);
  } while (result == -1 && errno == EINTR);
  SWEEP_LOG_ON_ERROR(result == pid_, "waitpid");
}

void ChildProcess::signal_group(int signal) {
  SWEEP_CHECK_SYS(unless_gone(::killpg(pid_, signal)));
  // Once reaped, pid_ may be another process's now: only the token finds what is left.
  signal_trial(reaped_ ? -1 : pid_, token_, signal);
}

void ChildProcess::end_leftovers(double grace_s) {
  end_trial_processes(reaped_ ? -1 : pid_, token_, grace_s);
}

std::optional<ExitStatus> ChildProcess::try_wait() {
  if (reaped_) return exit_;
  int status = 0;
  pid_t result;
  do {
    result = ::waitpid(pid_, &status, WNOHANG);
  } while (result == -1 && errno == EINTR);
  SWEEP_CHECK_SYS_RESULT(result, "waitpid");
  if (result == 0) return std::nullopt;
  reaped_ = true;
  ExitStatus exit;
  if (WIFEXITED(status)) {
    exit.exited = true;
    exit.code = WEXITSTATUS(status);
  } else {
    exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  exit_ = exit;
  return exit;
}

}  // namespace sweep::scheduler::detail
