/*
 * bench_folder_decode.cpp — times a `dataset: folder` load (trainer/data/folder_reader.h) alone:
 * the first load (list, decode on every core, write the cache file) with an empty cache
 * directory, then a second load of the same folder (list and stat every file, read the cache).
 *
 *   bench_folder_decode DIR [--cache-dir D] [--threads N]
 *
 * The cache directory (default: a fresh one under /tmp) is emptied first. Prints a table and
 * `RESULT key=value` lines; bench/data/run.sh runs Pillow's peer in the same run.
 */
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "trainer/data/folder_reader.h"

using namespace sweep::trainer;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Times a folder data set's decode and its cached second load");
  std::string dir, cache_dir = (fs::temp_directory_path() / "sweep-bench-folder-cache").string();
  int threads = 0;
  app.add_option("dir", dir, "a folder of one folder of images per class")->required();
  app.add_option("--cache-dir", cache_dir, "where the decoded tensor goes (emptied first)");
  app.add_option("--threads", threads, "decoding threads (0 = every core)");
  CLI11_PARSE(app, argc, argv);
  fs::remove_all(cache_dir);
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  FolderSpec spec;
  spec.cache_dir = cache_dir;
  auto start = std::chrono::steady_clock::now();
  const FolderListing listing = list_image_folder(dir, "dir");
  const double list_s = seconds_since(start);

  start = std::chrono::steady_clock::now();
  const Dataset first = read_image_folder(dir, "dir", spec);
  const double first_s = seconds_since(start);
  const std::int64_t decoded = folder_images_decoded();

  start = std::chrono::steady_clock::now();
  const Dataset second = read_image_folder(dir, "dir", spec);
  const double second_s = seconds_since(start);
  if (folder_images_decoded() != decoded || second.images != first.images) {
    std::fprintf(stderr, "the second load did not come from the cache\n");
    return 1;
  }
  const double n = double(first.size());
  std::printf("%s: %lld images of %dx%dx%d, %d classes\n", dir.c_str(),
              static_cast<long long>(first.size()), first.c, first.h, first.w, first.classes);
  std::printf("list + stat alone          %8.3f s\n", list_s);
  std::printf("first load (decode+cache)  %8.3f s  %10.0f images/s\n", first_s, n / first_s);
  std::printf("second load (from cache)   %8.3f s\n", second_s);
  std::printf(
      "RESULT sweep_files=%.0f\nRESULT sweep_list_s=%.3f\nRESULT sweep_first_s=%.3f\n"
      "RESULT sweep_files_per_s=%.0f\nRESULT sweep_cached_s=%.3f\n",
      n, list_s, first_s, n / first_s, second_s);
  return 0;
}
