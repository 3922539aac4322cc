/*
 * connection.h — one accepted client socket of `sweep serve` and the bytes read from it that no
 * answer has used yet. The gate owns it while a request arrives, a worker while it is answered;
 * it closes its socket when it ends, and counts itself among the server's open connections
 * until then.
 *
 * Thread safety: one owner at a time; `open` is shared by all and atomic.
 */
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

namespace sweep::serve::http {

class Connection {
 public:
  Connection(int fd, std::atomic<std::size_t>& open) : fd_(fd), open_(&open) { ++*open_; }
  ~Connection() {
    if (fd_ < 0) return;
    ::close(fd_);
    --*open_;
  }
  Connection(Connection&& other) noexcept
      : bytes(std::move(other.bytes)),
        request_bytes(other.request_bytes),
        answered(other.answered),
        fd_(std::exchange(other.fd_, -1)),
        open_(other.open_) {}
  Connection& operator=(Connection&&) = delete;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }

  std::string bytes;              // received, not yet used by an answer
  std::size_t request_bytes = 0;  // of `bytes`, the request a worker answers (the rest came after)
  std::size_t answered = 0;       // requests answered on it so far

 private:
  int fd_;
  std::atomic<std::size_t>* open_;
};

}  // namespace sweep::serve::http
