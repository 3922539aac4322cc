/*
 * store_version.cpp — the stat()-based change marker of a sweep database (store_version.h).
 */
#include "sweep/serve/store_version.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>

namespace sweep::serve {
namespace {

// A write younger than this may share its file time with the next one (see the header).
constexpr double kSettleSeconds = 1.0;

double seconds_of(const timespec& t) { return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9; }

// "inode.size.seconds.nanoseconds" of one file, or "-" when it does not exist or is empty: a
// read-only connection creates an empty -wal beside a finished sweep, which changes nothing.
std::string file_marker(const std::string& path, double& newest) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) return "-";
  newest = std::max(newest, seconds_of(st.st_mtim));
  return std::to_string(st.st_ino) + "." + std::to_string(st.st_size) + "." +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
}

}  // namespace

StoreVersion store_version(const std::filesystem::path& db) {
  StoreVersion version;
  double newest = 0;
  const std::string main_file = file_marker(db.string(), newest);
  if (main_file == "-") return version;
  version.marker = main_file + "~" + file_marker(db.string() + "-wal", newest);
  version.last_change = newest;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  version.settled = seconds_of(now) - newest >= kSettleSeconds;
  return version;
}

std::string issued_token(const StoreVersion& version) {
  static std::atomic<std::uint64_t> issued{0};
  if (version.settled) return version.marker;
  return version.marker + "+" + std::to_string(issued.fetch_add(1, std::memory_order_relaxed));
}

}  // namespace sweep::serve
