/*
 * child_process.h — one spawned program with its stdout and stderr on pipes (internal to
 * command_trial). RAII: a ChildProcess that is destroyed kills what is left of the program's
 * process group and of its whole process tree (process_tree.h: setsid and double-forked children
 * too) with SIGKILL and reaps the program, so no path leaves a zombie or an orphan holding a GPU.
 */
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sweep::scheduler::detail {

// An owned file descriptor.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() { reset(); }

  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }
  int release() noexcept {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

struct ExitStatus {
  bool exited = false;  // normal exit with `code`; otherwise killed by `signal`
  int code = 0;
  int signal = 0;
  std::string describe() const;  // "exited with code 3", "killed by signal 9 (Killed)"
};

class ChildProcess {
 public:
  // Starts argv[0] (searched on PATH) in `working_dir` ("" = ours) with `environment` (complete,
  // "KEY=value" entries), in a new process group, stdin from /dev/null. Throws sweep::CallError.
  ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
               const std::string& working_dir);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  FileDescriptor& stdout_pipe() { return stdout_; }
  FileDescriptor& stderr_pipe() { return stderr_; }

  // Sends `signal` to the whole process group and to the rest of the program's tree (children
  // that left the group); what is already gone is fine.
  void signal_group(int signal);
  // After the program exited: its leftover processes get SIGTERM, then SIGKILL after `grace_s`.
  void end_leftovers(double grace_s);
  // The exit status once the program ended (reaps it); nullopt while it runs.
  std::optional<ExitStatus> try_wait();

 private:
  pid_t pid_ = -1;
  std::string token_;  // SWEEP_TRIAL_TOKEN=... in the program's environment (process_tree.h)
  bool reaped_ = false;
  ExitStatus exit_;  // valid once reaped_
  FileDescriptor stdout_, stderr_;
};

// The current environment with `overrides` applied, as "KEY=value" strings.
std::vector<std::string> environment_with(const std::map<std::string, std::string>& overrides);

}  // namespace sweep::scheduler::detail
