/*
 * tuning_cache.h — timed choices (which algorithm or kernel runs a shape on a GPU) kept in a file,
 * so that the next process on the same machine starts without timing them again.
 *
 * A GPU step's first call of each convolution shape times the candidates (cuDNN's algorithms, our
 * kernels, as a fused array shares the GPU), which is a large part of a small sweep's start, in
 * every process. The choices only pick among implementations that compute the
 * same thing, so a kept one is as good as a new one as long as the GPU, the driver, the libraries
 * and this program are the ones that timed it: every entry is filed under such a fingerprint, and
 * entries of other fingerprints are kept in the file but never used. A rebuilt program has a new
 * fingerprint, and times again.
 *
 * The file: one entry a line, `FINGERPRINT<TAB>KIND<TAB>KEY<TAB>VALUE` (the fingerprint as 16 hex
 * digits of its FNV-1a hash; key and value comma-separated numbers). A line that does not parse
 * is dropped, never trusted. Writers take an flock on FILE.lock, read what other processes wrote,
 * and replace the file by a rename, so a reader sees the old file or the new one, and two writers
 * lose nothing. A file that cannot be read or written leaves the choices in memory for the
 * process (a note on stderr, once).
 *
 * Where: $SWEEP_TUNING_CACHE; else tuning.tsv in $SWEEP_HOME, else in ~/.sweep (beside the queue,
 * common/sweep_home.h). SWEEP_TUNING_CACHE set but empty keeps choices in memory only. (C++17 in
 * its interface: the CUDA sources, compiled as C++17, include it.)
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace sweep::trainer {

class TuningCache {
 public:
  // `file` empty: in memory only. The file is read at the first find or put.
  explicit TuningCache(std::filesystem::path file);

  // The value put under (fingerprint, kind, key), in this process or by an earlier one.
  std::optional<std::vector<double>> find(std::string_view fingerprint, std::string_view kind,
                                          const std::vector<long long>& key);
  // Keeps the value for this process and writes it to the file. `kind`: lowercase letters and
  // '_'; the value's numbers: what a double holds exactly (integers up to 2^53), or infinity.
  void put(std::string_view fingerprint, std::string_view kind, const std::vector<long long>& key,
           const std::vector<double>& value);

  // How many values of `kind` are kept for `fingerprint` (the GPU tests check what a step kept).
  std::size_t count(std::string_view fingerprint, std::string_view kind);

  const std::filesystem::path& file() const { return file_; }

 private:
  using Key = std::tuple<std::uint64_t, std::string, std::vector<long long>>;
  void load_once();
  void write(const Key& key, const std::vector<double>& value);

  std::filesystem::path file_;
  std::mutex mutex_;
  bool loaded_ = false;
  bool warned_ = false;
  std::map<Key, std::vector<double>> entries_;
};

// The process's cache, at the place the header says (read once).
TuningCache& tuning_cache();

}  // namespace sweep::trainer
