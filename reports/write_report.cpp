/*
 * write_report.cpp — write_report() and the atomic file write under it.
 *
 * The non-obvious decision: the temporary file is made with mkstemp in the target's own
 * directory (rename is only atomic within one filesystem) and fsync'ed before the rename, so a
 * crash leaves either the old report or the new one, and two processes writing the same report
 * at once never interleave bytes. mkstemp makes the file 0600; it is opened up to 0644 like any
 * file the user writes, since a report is meant to be shared.
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
#include "reports/report.h"
#include "store/store.h"

namespace sweep::reports {
namespace {

// Owns the descriptor and, until released, the temporary file's name: unlinked on failure.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) {
    std::string pattern = target.string() + ".tmp.XXXXXX";
    name_.assign(pattern.begin(), pattern.end());
    name_.push_back('\0');
    fd_ = ::mkstemp(name_.data());
    if (fd_ == -1)
      throw Error("cannot write the report " + target.string() + ": " + std::strerror(errno));
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
      SWEEP_CHECK_SYS_RESULT(n, "write");
      done += static_cast<std::size_t>(n);
    }
    SWEEP_CHECK_SYS(::fchmod(fd_, 0644));
    SWEEP_CHECK_SYS(::fsync(fd_));
    const int fd = fd_;
    fd_ = -1;
    SWEEP_CHECK_SYS(::close(fd));
  }

  void rename_to(const std::filesystem::path& target) {
    SWEEP_CHECK_SYS(::rename(name_.data(), target.c_str()));
    committed_ = true;
  }

 private:
  std::vector<char> name_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create the directory " + dir.string() + " for the report: " + ec.message());
  TempFile temp(path);
  temp.write_all(text);
  temp.rename_to(path);
}

void write_report(Store& store, const std::string& sweep, const std::string& out_path) {
  ReportData data = load_report_data(store, sweep);
  data.generated_at = utc_now();
  write_file_atomically(out_path, render_report(data));
}

}  // namespace sweep::reports
