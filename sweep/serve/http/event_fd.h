/*
 * event_fd.h — a Linux eventfd as a flag or a doorbell that poll() and epoll can wait on beside
 * sockets: signal() makes it readable; clear() (a doorbell) makes it quiet again, a flag is
 * never cleared.
 *
 * Thread safety: signal() and clear() from any thread.
 */
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/check.h"

namespace sweep::serve::http {

class EventFd {
 public:
  EventFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) { SWEEP_CHECK_SYS(fd_); }
  ~EventFd() { ::close(fd_); }
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  int fd() const { return fd_; }
  void signal() const {
    const std::uint64_t one = 1;
    // Only fails when the counter would overflow, which leaves it readable anyway.
    [[maybe_unused]] const ssize_t written = ::write(fd_, &one, sizeof one);
  }
  void clear() const {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t read = ::read(fd_, &count, sizeof count);
  }

 private:
  int fd_;
};

}  // namespace sweep::serve::http
