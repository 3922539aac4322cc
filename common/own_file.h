/*
 * own_file.h — opens a file sweep writes on its own inside its own directories: a sweep's .lock,
 * a trial's log.txt, a checkpoint's temporary file, the queue's locks and logs under $SWEEP_HOME.
 *
 * The rule: such a file is never reached through a symbolic link and is only ever a regular file.
 * Those directories may be shared (a group-writable runs/), and a link planted at one of these
 * names would otherwise make sweep, run by another user or by root, truncate or append to any file
 * the link names; a FIFO planted there would hang the writer. So the name's last component is
 * opened with O_NOFOLLOW, without blocking until its type is known, and a link or anything but a
 * regular file is refused with a message that names the path. Files replaced by a rename (the
 * report, a checkpoint) need only their temporary opened so: rename replaces a link, never its
 * target.
 */
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/check.h"

namespace sweep {

// The refusal for a symbolic link at `path`, where sweep writes a file of its own.
inline std::string own_file_link_refusal(const std::filesystem::path& path) {
  return path.string() +
         " is a symbolic link: sweep writes its own files only as regular files; remove the link";
}

// Throws sweep::Error naming `path` when it is a symbolic link or exists as something other than a
// regular file or a directory (a FIFO, a socket, a device); nothing when it is missing.
inline void refuse_unless_own_file(const std::filesystem::path& path) {
  struct stat file {};
  if (::lstat(path.c_str(), &file) != 0) return;
  if (S_ISLNK(file.st_mode)) throw Error(own_file_link_refusal(path));
  if (!S_ISREG(file.st_mode) && !S_ISDIR(file.st_mode))
    throw Error(path.string() +
                " is not a regular file: sweep writes its own files only as regular files; "
                "remove it");
}

// ::open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode) for a file of sweep's own (the rule above).
// Throws sweep::Error naming the path for a symbolic link or a file that is not a regular one;
// any other failure returns -1 with errno set, for the caller to report in its own words.
inline int open_own_file(const std::filesystem::path& path, int flags, mode_t mode = 0644) {
  const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd == -1) {
    const int error = errno;
    refuse_unless_own_file(path);  // ELOOP for a link, ENXIO for a FIFO without a reader
    errno = error;
    return -1;
  }
  struct stat file {};
  if (::fstat(fd, &file) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  if (!S_ISREG(file.st_mode)) {
    ::close(fd);
    throw Error(path.string() +
                " is not a regular file: sweep writes its own files only as regular files; "
                "remove it");
  }
  // O_NONBLOCK was only for a FIFO's open; a regular file's reads and writes never block on it.
  if ((flags & O_NONBLOCK) == 0) {
    const int status = ::fcntl(fd, F_GETFL);
    if (status == -1 || ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK) == -1) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return -1;
    }
  }
  return fd;
}

// Writes `bytes` to `path`, a file of sweep's own, whole or not at all and durably: a temporary
// PATH.tmp (opened by open_own_file, so never through a link), every byte written and fsynced,
// renamed over `path` (which replaces a link there, never its target), then the directory
// fsynced so that the rename itself survives a crash. `what` names the file in messages
// ("checkpoint", "model file"). Throws sweep::Error naming the path and the system's reason.
inline void write_own_file_durably(const std::filesystem::path& path, std::string_view bytes,
                                   const std::string& what) {
  const std::string tmp = path.string() + ".tmp";
  const int fd = open_own_file(tmp, O_WRONLY | O_CREAT | O_TRUNC);
  if (fd < 0) throw Error(tmp + ": cannot create the " + what + ": " + std::strerror(errno));
  try {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n == -1 && errno == EINTR) continue;
      SWEEP_CHECK_SYS(n);
      done += static_cast<std::size_t>(n);
    }
    SWEEP_CHECK_SYS(::fsync(fd));
  } catch (const std::exception& e) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(tmp + ": writing the " + what + " failed: " + e.what());
  }
  SWEEP_CHECK_SYS(::close(fd));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw Error(path.string() + ": cannot move the new " + what + " into place: " + why);
  }
  const std::string dir = path.has_parent_path() ? path.parent_path().string() : std::string(".");
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    SWEEP_LOG_ON_ERROR(::fsync(dfd) == 0, ("fsync of the " + what + "'s directory").c_str());
    ::close(dfd);
  }
}

}  // namespace sweep
