/*
 * serve_test_util.h — what the `sweep serve` tests share: a temporary directory, and a child
 * process (the real `sweep` binary) with its output in a file, ended by signal.
 */
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace sweep::serve::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path& path);

// `argv` run with stdout and stderr into `log`; killed (SIGKILL) if still running at the end.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::filesystem::path& log);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void signal(int sig) const;
  // The exit status, or nullopt if it did not end within `timeout` (-signal when killed).
  std::optional<int> wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// The port in the first "sweep serve: http://HOST:PORT/..." line of `log`, waiting up to
// `timeout` for it; 0 when none came.
int served_port(const std::filesystem::path& log, std::chrono::milliseconds timeout);

}  // namespace sweep::serve::testing
