/*
 * sweep_lock.cpp — flock on OUT/NAME/.lock, and the holder's line inside it.
 *
 * The holder's line is written after the lock is taken (truncate, write) and read by a refused
 * process without the lock, so a reader may see it half-written or empty; it is only a hint for
 * the message, never a decision. The decision is the flock alone. The lock file is opened as a
 * file of sweep's own (common/own_file.h): a symbolic link planted at .lock is refused, never
 * followed, so a lock taken by root truncates no file but its own.
 */
#include "sweep/run/sweep_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/format.h"
#include "common/own_file.h"

namespace sweep::run {

namespace fs = std::filesystem;

namespace {

std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw.size() > 200 ? raw.substr(0, 200) + "..." : raw;
}

std::string holder_line() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  std::ostringstream line;
  line << "pid " << ::getpid() << " on " << host << ", `" << command_line() << "`, since " << when
       << "\n";
  return line.str();
}

std::string read_holder(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

fs::path SweepLock::lock_path(const fs::path& run_dir) { return run_dir / ".lock"; }

std::optional<bool> SweepLock::held(const fs::path& run_dir) {
  struct stat file {};
  if (::stat(lock_path(run_dir).c_str(), &file) != 0) return std::nullopt;
  std::ifstream locks("/proc/locks");
  if (!locks) return std::nullopt;
  // "1: FLOCK  ADVISORY  WRITE 812 00:2d:1234 0 EOF" (a waiter's line has "->" after the number):
  // the device's major and minor in hex, then the inode.
  char device[64];
  std::snprintf(device, sizeof device, "%02x:%02x:%llu", ::major(file.st_dev), ::minor(file.st_dev),
                static_cast<unsigned long long>(file.st_ino));
  for (std::string line; std::getline(locks, line);) {
    std::istringstream words(line);
    std::string number, kind;
    words >> number >> kind;
    if (kind == "->") continue;
    std::string mode, access, pid, where;
    words >> mode >> access >> pid >> where;
    if (kind == "FLOCK" && where == device) return true;
  }
  return false;
}

SweepLock SweepLock::acquire(const fs::path& run_dir, const std::string& sweep_name,
                             std::chrono::duration<double> wait) {
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec)
    throw Error("cannot create the sweep directory " + run_dir.string() + ": " + ec.message());
  const fs::path path = lock_path(run_dir);
  int raw;
  SWEEP_CHECK_SYS(raw = open_own_file(path, O_RDWR | O_CREAT));
  SweepLock lock(raw);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) SWEEP_CHECK_SYS(-1);
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::string holder = read_holder(path);
      throw SweepBusy("sweep '" + sweep_name + "' is being run by another process" +
                      (holder.empty() ? std::string() : " (" + printable(holder) + ")") +
                      ": wait for it to end, or stop it (Ctrl-C) and then run  sweep resume " +
                      sweep_name + ". Nothing was changed.");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string line = holder_line();
  SWEEP_CHECK_SYS(::ftruncate(lock.fd_, 0));
  SWEEP_CHECK_SYS(::pwrite(lock.fd_, line.data(), line.size(), 0));
  return lock;
}

SweepLock& SweepLock::operator=(SweepLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SweepLock::~SweepLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor drops the flock
}

}  // namespace sweep::run
