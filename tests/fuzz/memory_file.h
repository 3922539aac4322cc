/*
 * memory_file.h — fuzz input bytes as a file the data readers can open by path.
 *
 * The readers take paths, so each harness writes its input into a memfd (a file in memory: no
 * disk, nothing left behind, even when the process dies on a finding) and hands them
 * /proc/self/fd/N. One MemoryFile is created per harness and rewritten for every input.
 */
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

class MemoryFile {
 public:
  explicit MemoryFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {
    if (fd_ < 0) die("memfd_create");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Replaces the file's contents with `size` bytes from `data`.
  void write(const std::uint8_t* data, std::size_t size) {
    if (ftruncate(fd_, 0) != 0) die("ftruncate");
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) die("pwrite");
      done += static_cast<std::size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  // A harness that cannot set up its file is broken, not the code under test: stop loudly.
  [[noreturn]] static void die(const char* call) {
    std::perror(call);
    std::abort();
  }
  int fd_;
  std::string path_;
};
