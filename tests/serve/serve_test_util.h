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
#include <string_view>
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

// A TCP connection to 127.0.0.1:PORT written byte by byte as a test wants: a request cut short,
// a slow one, one with too many headers. Every call is bounded in time.
class RawClient {
 public:
  explicit RawClient(int port);  // throws std::runtime_error when it cannot connect
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  // Sends all of `bytes`; false once the server has closed or reset the connection (or 10 s
  // passed without it taking them).
  bool send(std::string_view bytes);
  // What the server sends until it closes the connection, or until `timeout`; `closed` says
  // which.
  std::string read_until_closed(std::chrono::milliseconds timeout, bool* closed = nullptr);
  // One answer (its head and Content-Length body) on a connection kept alive; "" when none
  // came within `timeout`.
  std::string read_answer(std::chrono::milliseconds timeout);
  // Whether the server sent anything or closed, without waiting.
  bool heard_from_server() const;

 private:
  int fd_ = -1;
  std::string pending_;  // read past the last answer
};

// The status of an answer's first line ("HTTP/1.1 431 ..." → 431); 0 when there is none.
int status_of(const std::string& answer);

}  // namespace sweep::serve::testing
