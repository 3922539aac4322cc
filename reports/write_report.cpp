/*
 * write_report.cpp — write_report() and the atomic file write under it.
 *
 * The non-obvious decision: the temporary file is made with mkstemp in the target's own
 * directory (rename is only atomic within one filesystem) and fsync'ed before the rename, so a
 * crash leaves either the old report or the new one, and two processes writing the same report
 * at once never interleave bytes. mkstemp makes the file 0600; it is opened up to 0644 like any
 * file the user writes, since a report (or an export) is meant to be shared, or takes the mode of
 * the file it replaces. Only a regular file is replaced so: a symbolic link's target is written
 * (the link stays), and a device or a pipe (-o /dev/stdout, /dev/full, a FIFO) is written to as it
 * is, never replaced by a file. That is for a path the user names; a file sweep writes on its own
 * (write_own_file_atomically) is only ever a regular file, never reached through a link.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>
#include <vector>

#include "common/check.h"
#include "common/own_file.h"
#include "reports/report.h"
#include "store/store.h"

namespace sweep::reports {
namespace {

// Owns the descriptor and, until released, the temporary file's name: unlinked on failure.
class TempFile {
 public:
  TempFile(const std::filesystem::path& target, mode_t mode) : target_(target), mode_(mode) {
    std::string pattern = target.string() + ".tmp.XXXXXX";
    name_.assign(pattern.begin(), pattern.end());
    name_.push_back('\0');
    fd_ = ::mkstemp(name_.data());
    if (fd_ == -1) fail();
  }
  ~TempFile() {
    if (fd_ != -1) SWEEP_LOG_ON_ERROR(::close(fd_) == 0, "close(report temp file)");
    if (!committed_) SWEEP_LOG_ON_ERROR(::unlink(name_.data()) == 0, "unlink(report temp file)");
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_all(std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n == -1 && errno == EINTR) continue;
      if (n == -1) fail();
      done += static_cast<std::size_t>(n);
    }
    if (::fchmod(fd_, mode_) != 0 || ::fsync(fd_) != 0) fail();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail();
  }

  void rename_to() {
    if (::rename(name_.data(), target_.c_str()) != 0) fail();
    committed_ = true;
  }

 private:
  // What the user reads: the file they asked for and the system's reason (a full disk, a file-size
  // limit, no permission), not our calls.
  [[noreturn]] void fail() const {
    throw Error("cannot write " + target_.string() + ": " + std::strerror(errno));
  }

  std::filesystem::path target_;
  mode_t mode_;
  std::vector<char> name_;
  int fd_ = -1;
  bool committed_ = false;
};

// The file a path names: a symbolic link's target, followed link by link (a dangling link's too:
// writing through it makes its target, as a shell's `>` would).
std::filesystem::path followed(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path target = path;
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) throw Error("cannot write " + path.string() + ": too many symbolic links");
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) throw Error("cannot write " + path.string() + ": " + ec.message());
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

// A device or a pipe, written as it is: no temporary file, nothing to rename, no fsync.
void write_in_place(const std::filesystem::path& path, const std::filesystem::path& target,
                    std::string_view text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  const auto fail = [&] {
    throw Error("cannot write " + path.string() + ": " + std::strerror(errno));
  };
  if (fd == -1) fail();
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n == -1 && errno == EINTR) continue;
    if (n == -1) {
      const int error = errno;
      ::close(fd);
      errno = error;
      fail();
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail();
}

// The directories `target` goes in (a message names `path`, the name the caller gave).
void make_parent_directories(const std::filesystem::path& target,
                             const std::filesystem::path& path) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create the directory " + dir.string() + " for " + path.string() + ": " +
                ec.message());
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  // A pipe or a device is recognised by the kernel's own resolution of the path first: links
  // such as /dev/stdout -> /proc/self/fd/1 -> pipe:[N] name no file that could be read as text.
  struct stat stream {};
  if (::stat(path.c_str(), &stream) == 0 && (S_ISFIFO(stream.st_mode) || S_ISCHR(stream.st_mode)))
    return write_in_place(path, path, text);
  const std::filesystem::path target = followed(path);
  make_parent_directories(target, path);
  struct stat existing {};
  mode_t mode = 0644;
  if (::stat(target.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode))
      throw Error("cannot write " + path.string() + ": it is a directory (give a file's path)");
    if (!S_ISREG(existing.st_mode)) return write_in_place(path, target, text);
    mode = existing.st_mode & 07777;
  }
  TempFile temp(target, mode);
  temp.write_all(text);
  temp.rename_to();
}

void write_own_file_atomically(const std::filesystem::path& path, std::string_view text) {
  refuse_unless_own_file(path);
  make_parent_directories(path, path);
  struct stat existing {};
  mode_t mode = 0644;
  if (::lstat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode))
    mode = existing.st_mode & 07777;
  TempFile temp(path, mode);
  temp.write_all(text);
  temp.rename_to();
}

std::string report_page(const Store& store, const std::string& sweep) {
  ReportData data = load_report_data(store, sweep);
  data.generated_at = utc_now();
  return render_report(data);
}

void write_report(Store& store, const std::string& sweep, const std::string& out_path) {
  write_file_atomically(out_path, report_page(store, sweep));
}

void write_own_report(Store& store, const std::string& sweep, const std::filesystem::path& path) {
  write_own_file_atomically(path, report_page(store, sweep));
}

}  // namespace sweep::reports
