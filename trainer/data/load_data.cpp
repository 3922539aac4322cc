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
#include "trainer/data/csv_reader.h"
#include "trainer/data/data_shape.h"
#include "trainer/data/folder_reader.h"
#include "trainer/data/idx_reader.h"
#include "trainer/data/numpy_data.h"
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

// A regular file's name, size and modification time; a directory's files' (directory_stamp);
// empty when neither can be read (then nothing is cached).
std::string path_stamp(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return directory_stamp(path);
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = std::filesystem::last_write_time(path, ec);
  return ec ? std::string()
            : path + ':' + std::to_string(size) + ':' +
                  std::to_string(time.time_since_epoch().count());
}

// Decoded files, kept for the life of the process: a sweep trains many trials on the same data
// set, and decompressing Fashion-MNIST costs about half a second per trial, more than a short GPU
// trial trains. An entry is used only while every file in its directory still has the size and
// modification time it had when it was read, so an edited data set is read again.
class DecodedFileCache {
 public:
  // The first `limit` rows of the split (all when limit <= 0), read once.
  // `stamp_of` says what of `dir` to compare: its files (directory_stamp), or every image below
  // it for a folder data set (folder_stamp).
  template <class Read>
  Dataset get(const std::string& dataset, const std::string& dir, const std::string& split,
              std::int64_t limit, Read read,
              std::string (*stamp_of)(const std::string&) = directory_stamp) {
    const std::string stamp = stamp_of(dir);
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

// A folder data set's DecodedFileCache key beside its folder: the settings its decode depends on.
std::string folder_settings(const FolderSpec& f) {
  return std::to_string(f.channels) + ' ' + std::to_string(f.height) + 'x' +
         std::to_string(f.width) + ' ' + std::string(name_of(f.resize)) + ' ' +
         std::string(name_of(f.on_bad_file)) + ' ' + f.cache_dir;
}

// dataset: folder. The validation folder is decoded to the training set's channels, and must
// have its classes and, without data.image_size, its image size.
void read_folders(const DataSpec& spec, Dataset& train, Dataset& test, bool need_test) {
  auto& cache = decoded_files();
  const std::string name(name_of(spec.dataset));
  const FolderSpec& f = spec.folder;
  train = cache.get(
      name, spec.path, "train " + folder_settings(f), spec.train_limit,
      [&] { return read_image_folder(spec.path, "data.path", f); }, folder_stamp);
  if (!need_test) return;
  if (spec.validation_path.empty())
    throw Error(
        "data.validation: test reads data.validation_path for dataset: folder, and it is "
        "not set; set it, or use validation: holdout or none");
  FolderSpec v = f;
  v.channels = train.c;
  test = cache.get(
      name, spec.validation_path, "validation " + folder_settings(v), spec.test_limit,
      [&] {
        return read_image_folder(spec.validation_path, "data.validation_path", v,
                                 &train.class_names);
      },
      folder_stamp);
  if (test.h != train.h || test.w != train.w)
    throw Error("data.validation_path " + spec.validation_path + ": images of " +
                std::to_string(test.h) + "x" + std::to_string(test.w) + ", data.path's are " +
                std::to_string(train.h) + "x" + std::to_string(train.w) +
                " (HxW); set data.image_size: [H, W] to bring every image to one size");
}

// dataset: numpy (an .npz or a directory of .npy files); the cache's key beside the path holds
// the settings the arrays are read with.
void read_numpy_files(const DataSpec& spec, Dataset& train, Dataset& test, bool need_test) {
  auto& cache = decoded_files();
  const std::string name(name_of(spec.dataset));
  const NumpyOptions o{spec.layout, spec.task};
  const std::string settings =
      std::string(name_of(spec.layout)) + ' ' + std::string(name_of(spec.task));
  train = cache.get(
      name, spec.path, "train " + settings, spec.train_limit,
      [&] { return read_numpy_split(spec.path, "train", o); }, path_stamp);
  if (!need_test) return;
  test = cache.get(
      name, spec.path, "test " + settings, spec.test_limit,
      [&] { return read_numpy_split(spec.path, "test", o); }, path_stamp);
  if (test.c != train.c || test.h != train.h || test.w != train.w ||
      test.is_float() != train.is_float())
    throw Error(test.source + ": its samples differ from " + train.source +
                "'s in shape or kind (uint8 images or float features)");
}

// dataset: csv. The validation file's labels are numbered by the training file's classes, so
// its cache key holds them too.
void read_csv_files(const DataSpec& spec, Dataset& train, Dataset& test, bool need_test) {
  auto& cache = decoded_files();
  const std::string name(name_of(spec.dataset));
  const CsvOptions o{spec.label, spec.feature_columns, spec.task};
  std::string settings = std::string(name_of(spec.task)) + " label=" + spec.label + " columns=";
  for (const std::string& c : spec.feature_columns) settings += c + '\n';
  train = cache.get(
      name, spec.path, "train " + settings, spec.train_limit,
      [&] { return read_csv(spec.path, o); }, path_stamp);
  if (!need_test) return;
  if (spec.validation_path.empty())
    throw Error(
        "data.validation: test reads data.validation_path for dataset: csv, and it is "
        "not set; set it, or use validation: holdout or none");
  std::string classes;
  for (const std::string& c : train.class_names) classes += c + '\n';
  test = cache.get(
      name, spec.validation_path,
      "validation " + settings + " of " + spec.path + " classes " + classes, spec.test_limit,
      [&] { return read_csv_validation(spec.validation_path, o, spec.path, train); }, path_stamp);
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
    case DatasetKind::synthetic: {
      const auto make = spec.task == Task::regression ? make_synthetic_regression : make_synthetic;
      train = make(spec.synthetic, "train");
      if (need_test) test = make(spec.synthetic, "test");
      return;
    }
    case DatasetKind::folder:
      read_folders(spec, train, test, need_test);
      return;
    case DatasetKind::numpy:
      read_numpy_files(spec, train, test, need_test);
      return;
    case DatasetKind::csv:
      read_csv_files(spec, train, test, need_test);
      return;
  }
  throw Error("data.dataset: not one of " + words_text<DatasetKind>());
}

// What of the data's files LoadedCache compares: a folder data set's every image (and its
// validation folder's), a numpy or CSV data set's file or directory (and its validation file's),
// the files of any other data set's folder.
std::string data_stamp(const DataSpec& spec) {
  if (spec.dataset == DatasetKind::synthetic) return "synthetic";
  if (spec.dataset == DatasetKind::numpy) return path_stamp(spec.path);
  if (spec.dataset == DatasetKind::csv) {
    const std::string train = path_stamp(spec.path);
    if (train.empty() || spec.validation_path.empty()) return train;
    const std::string validation = path_stamp(spec.validation_path);
    return validation.empty() ? std::string() : train + '|' + validation;
  }
  if (spec.dataset != DatasetKind::folder) return directory_stamp(spec.path);
  const std::string train = folder_stamp(spec.path);
  if (train.empty() || spec.validation_path.empty()) return train;
  const std::string validation = folder_stamp(spec.validation_path);
  return validation.empty() ? std::string() : train + '|' + validation;
}

// load_data_shared's entries: the most recent first.
class LoadedCache {
 public:
  // `load`: false answers null rather than loading what is not here.
  std::shared_ptr<const LoadedData> get(const DataSpec& spec, std::uint64_t seed, bool load) {
    const std::uint64_t drawn = load_seed(spec, seed);
    const std::string stamp = data_stamp(spec);
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
  out.norm = spec.normalize ? channel_stats(out.train) : identity_stats(out.train);
  return out;
}

}  // namespace sweep::trainer
