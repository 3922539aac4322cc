/*
 * own_file_stream.h — a std::ostream that appends to a file of sweep's own (own_file.h: never
 * through a symbolic link, only a regular file): a trial's log.txt, a queue job's log.
 *
 * The file is opened O_APPEND, so several streams on one file (a job's run and its heartbeat)
 * each add whole flushed writes at the end. Output is buffered until a flush (std::endl,
 * std::unitbuf) or a full buffer; a failed write sets the stream's badbit.
 */
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <streambuf>

#include "common/check.h"
#include "common/own_file.h"

namespace sweep {

class OwnFileBuf : public std::streambuf {
 public:
  explicit OwnFileBuf(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }
  ~OwnFileBuf() override {
    flush_buffer();
    SWEEP_LOG_ON_ERROR(::close(fd_) == 0, "close(own file)");
  }
  OwnFileBuf(const OwnFileBuf&) = delete;
  OwnFileBuf& operator=(const OwnFileBuf&) = delete;

 protected:
  int_type overflow(int_type ch) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    const char* next = pbase();
    while (next < pptr()) {
      const ssize_t n = ::write(fd_, next, static_cast<std::size_t>(pptr() - next));
      if (n == -1 && errno == EINTR) continue;
      if (n <= 0) {
        setp(buffer_, buffer_ + sizeof buffer_);  // what could not be written is dropped
        return false;
      }
      next += n;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return true;
  }

  int fd_;
  char buffer_[4096];
};

class OwnFileStream : public std::ostream {
 public:
  // Opens `path` for appending, creating it. Throws sweep::Error naming the path when it is a
  // symbolic link or not a regular file, or cannot be opened (with the system's reason).
  explicit OwnFileStream(const std::filesystem::path& path)
      : std::ostream(nullptr), buffer_(open_for_append(path)) {
    rdbuf(&buffer_);
  }

 private:
  static int open_for_append(const std::filesystem::path& path) {
    const int fd = open_own_file(path, O_WRONLY | O_CREAT | O_APPEND);
    if (fd == -1) throw Error("cannot open " + path.string() + ": " + std::strerror(errno));
    return fd;
  }

  OwnFileBuf buffer_;
};

}  // namespace sweep
