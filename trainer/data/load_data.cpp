/*
 * load_data.cpp — dispatch on the data set's name, then limits, holdout and statistics.
 *
 * The holdout is drawn with our own Fisher-Yates over std::mt19937_64's raw output (not
 * std::shuffle, whose algorithm is left to the standard library), and the training part keeps the
 * files' order, so train_limit and the holdout compose predictably.
 */
#include "trainer/data/load_data.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "trainer/data/cifar_reader.h"
#include "trainer/data/data_shape.h"
#include "trainer/data/idx_reader.h"
#include "trainer/data/shuffle.h"
#include "trainer/data/synthetic.h"

namespace sweep::trainer {

namespace {

// The names, sizes and modification times of the files in `dir`; empty when it cannot be read
// (then nothing is cached: the reader says why).
std::string directory_stamp(const std::string& dir) {
  std::error_code ec;
  std::string stamp;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    stamp += entry.path().filename().string() + ':' + std::to_string(entry.file_size(ec)) + ':' +
             std::to_string(entry.last_write_time(ec).time_since_epoch().count()) + ';';
  }
  return ec ? std::string() : stamp;
}

// Decoded files, kept for the life of the process: a sweep trains many trials on the same data
// set, and decompressing Fashion-MNIST costs about half a second per trial, more than a short GPU
// trial trains. An entry is used only while every file in its directory still has the size and
// modification time it had when it was read, so an edited data set is read again.
class DecodedFileCache {
 public:
  // The first `limit` rows of the split (all when limit <= 0), read once.
  template <class Read>
  Dataset get(const std::string& dataset, const std::string& dir, const std::string& split,
              std::int64_t limit, Read read) {
    const std::string stamp = directory_stamp(dir);
    const auto key = std::make_tuple(dataset, dir, split);
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.stamp != stamp || stamp.empty()) {
      if (entries_.size() >= kMaxEntries) entries_.clear();
      Entry fresh{stamp, std::make_shared<const Dataset>(read())};
      it = entries_.insert_or_assign(key, std::move(fresh)).first;
    }
    // A copy (callers cut and shuffle their own) of no more rows than they keep: a trial with
    // train_limit copies its rows, not the whole set.
    return first_rows(*it->second.data, limit);
  }

 private:
  static constexpr std::size_t kMaxEntries = 8;
  struct Entry {
    std::string stamp;
    std::shared_ptr<const Dataset> data;
  };

  std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, std::string>, Entry> entries_;
};

DecodedFileCache& decoded_files() {
  static DecodedFileCache cache;
  return cache;
}

// The splits, cut to data.train_limit and data.test_limit as they are copied out of the cache
// (the synthetic sets are cut by load_data's keep_first).
void read_both(const DataSpec& spec, Dataset& train, Dataset& test, bool need_test) {
  const std::string name(name_of(spec.dataset));
  auto& cache = decoded_files();
  switch (spec.dataset) {
    case DatasetKind::fashion_mnist:
    case DatasetKind::mnist:
      train = cache.get(name, spec.path, "train", spec.train_limit,
                        [&] { return read_idx_split(spec.path, "train", kMnistClasses); });
      if (need_test)
        test = cache.get(name, spec.path, "t10k", spec.test_limit,
                         [&] { return read_idx_split(spec.path, "t10k", kMnistClasses); });
      return;
    case DatasetKind::cifar10:
      train = cache.get(name, spec.path, "train", spec.train_limit,
                        [&] { return read_cifar10_split(spec.path, "train"); });
      if (need_test)
        test = cache.get(name, spec.path, "test", spec.test_limit,
                         [&] { return read_cifar10_split(spec.path, "test"); });
      return;
    case DatasetKind::synthetic:
      train = make_synthetic(spec.synthetic, "train");
      if (need_test) test = make_synthetic(spec.synthetic, "test");
      return;
  }
  throw Error("data.dataset: not one of " + words_text<DatasetKind>());
}

// load_data_shared's entries: the most recent first.
class LoadedCache {
 public:
  // `load`: false answers null rather than loading what is not here.
  std::shared_ptr<const LoadedData> get(const DataSpec& spec, std::uint64_t seed, bool load) {
    const std::uint64_t drawn = load_seed(spec, seed);
    const std::string stamp = spec.dataset == DatasetKind::synthetic ? std::string("synthetic")
                                                                     : directory_stamp(spec.path);
    std::lock_guard lock(mutex_);
    if (!stamp.empty())
      for (const Entry& e : entries_)
        if (e.spec == spec && e.seed == drawn && e.stamp == stamp) return e.data;
    if (!load) return nullptr;
    auto data = std::make_shared<const LoadedData>(load_data(spec, seed));
    if (stamp.empty()) return data;
    std::erase_if(entries_, [&](const Entry& e) { return e.spec == spec && e.seed == drawn; });
    entries_.insert(entries_.begin(), Entry{spec, drawn, stamp, data});
    if (entries_.size() > kMaxEntries) entries_.pop_back();
    return data;
  }

 private:
  static constexpr std::size_t kMaxEntries = 2;
  struct Entry {
    DataSpec spec;
    std::uint64_t seed;  // load_seed
    std::string stamp;
    std::shared_ptr<const LoadedData> data;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
};

LoadedCache& loaded_cache() {
  static LoadedCache cache;
  return cache;
}

}  // namespace

std::uint64_t load_seed(const DataSpec& spec, std::uint64_t seed) {
  return spec.validation == Validation::holdout ? seed : 0;
}

std::shared_ptr<const LoadedData> load_data_shared(const DataSpec& spec, std::uint64_t seed) {
  return loaded_cache().get(spec, seed, true);
}

std::shared_ptr<const LoadedData> load_data_cached(const DataSpec& spec, std::uint64_t seed) {
  return loaded_cache().get(spec, seed, false);
}

LoadedData load_data(const DataSpec& spec, std::uint64_t seed) {
  const Validation v = spec.validation;
  LoadedData out;
  out.validation_source = std::string(name_of(v));
  Dataset test;
  read_both(spec, out.train, test, v == Validation::test);
  keep_first(out.train, spec.train_limit);

  if (v == Validation::test) {
    keep_first(test, spec.test_limit);
    out.validation = std::move(test);
  } else if (v == Validation::holdout) {
    if (!(spec.holdout_fraction > 0 && spec.holdout_fraction < 1))
      throw Error("data.holdout_fraction must be in (0, 1), not " +
                  std::to_string(spec.holdout_fraction));
    const std::int64_t n = out.train.size();
    const auto held = static_cast<std::int64_t>(std::llround(double(n) * spec.holdout_fraction));
    if (held < 1 || held >= n)
      throw Error("data.holdout_fraction " + std::to_string(spec.holdout_fraction) + " of " +
                  std::to_string(n) + " training images leaves an empty set");
    std::vector<std::int32_t> perm = shuffled_indices(n, seed ^ 0x686f6c646f7574ull);  // "holdout"
    std::vector<std::int64_t> val_rows(perm.begin(), perm.begin() + held);
    std::vector<std::int64_t> train_rows(perm.begin() + held, perm.end());
    std::sort(val_rows.begin(), val_rows.end());
    std::sort(train_rows.begin(), train_rows.end());
    out.validation = take_rows(out.train, val_rows);
    out.train = take_rows(out.train, train_rows);
  }
  if (out.train.empty()) throw Error(out.train.source + ": the training set is empty");
  if (spec.normalize) out.norm = channel_stats(out.train);
  return out;
}

}  // namespace sweep::trainer
