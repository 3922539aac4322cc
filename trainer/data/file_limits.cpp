/*
 * file_limits.cpp — the data size limit, from sysconf's physical memory.
 */
#include "trainer/data/file_limits.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "common/check.h"

namespace sweep::trainer {

namespace {

constexpr std::uint64_t kMaxDataBytes = std::uint64_t(16) << 30;

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(std::uint64_t(1) << 30));
  return text;
}

}  // namespace

std::uint64_t max_data_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kMaxDataBytes;
  return std::min(kMaxDataBytes, std::uint64_t(pages) * std::uint64_t(page));
}

void check_data_size(const std::string& path, const std::string& what, std::uint64_t bytes) {
  const std::uint64_t limit = max_data_bytes();
  if (bytes > limit)
    throw Error(path + ": " + what + " is " + std::to_string(bytes) + " bytes (" + gib(bytes) +
                "), over the " + gib(limit) +
                " a data set may take (16 GiB, or the machine's memory when smaller)");
}

std::uint64_t regular_file_size(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw Error(path + ": not a regular file");
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read its size: " + ec.message());
  return size;
}

}  // namespace sweep::trainer
