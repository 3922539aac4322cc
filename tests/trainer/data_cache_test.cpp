// The decoded-file cache in load_data: a second load of the same files gives the same data
// without reading them again, and an edited file is read again (never a stale data set).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "trainer/data/load_data.h"

namespace {

namespace fs = std::filesystem;
using sweep::trainer::DataSpec;
using sweep::trainer::load_data;

void put_u32(std::ofstream& out, std::uint32_t v) {
  const unsigned char b[4] = {static_cast<unsigned char>(v >> 24),
                              static_cast<unsigned char>(v >> 16),
                              static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
  out.write(reinterpret_cast<const char*>(b), 4);
}

// n images of 2x2 pixels all equal to `pixel`, labels i % 10.
void write_split(const fs::path& dir, const std::string& split, int n, unsigned char pixel) {
  std::ofstream images(dir / (split + "-images-idx3-ubyte"), std::ios::binary);
  put_u32(images, 0x803);
  put_u32(images, static_cast<std::uint32_t>(n));
  put_u32(images, 2);
  put_u32(images, 2);
  for (int i = 0; i < n * 4; ++i) images.put(static_cast<char>(pixel));
  std::ofstream labels(dir / (split + "-labels-idx1-ubyte"), std::ios::binary);
  put_u32(labels, 0x801);
  put_u32(labels, static_cast<std::uint32_t>(n));
  for (int i = 0; i < n; ++i) labels.put(static_cast<char>(i % 10));
}

// A directory of 20 training and 10 test images (pixels 7), removed at the end, and a DataSpec
// that reads it as MNIST (without normalisation).
struct TempMnist {
  fs::path dir;
  DataSpec spec;
  explicit TempMnist(const std::string& name)
      : dir(fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    fs::create_directories(dir);
    write_split(dir, "train", 20, 7);
    write_split(dir, "t10k", 10, 7);
    spec.dataset = sweep::trainer::DatasetKind::mnist;
    spec.path = dir.string();
    spec.normalize = false;
  }
  ~TempMnist() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

TEST(DataCache, SecondLoadIsTheSameAndAnEditedFileIsReadAgain) {
  TempMnist data("sweep_data_cache");
  const fs::path& dir = data.dir;
  DataSpec spec = data.spec;

  const auto first = load_data(spec, 1);
  const auto second = load_data(spec, 1);
  EXPECT_EQ(first.train.images, second.train.images);
  EXPECT_EQ(first.validation.labels, second.validation.labels);
  ASSERT_EQ(first.train.size(), 20);

  write_split(dir, "train", 30, 9);  // a different size: the stamp changes
  const auto edited = load_data(spec, 1);
  EXPECT_EQ(edited.train.size(), 30);
  EXPECT_EQ(edited.train.images.front(), 9);

  fs::resize_file(dir / "train-images-idx3-ubyte", 40);  // truncated: the reader's error again
  EXPECT_THROW(load_data(spec, 1), sweep::Error);
}

// A limit copies only the rows it keeps from the cached split, and the split itself stays whole:
// a later load without the limit still gets every row.
TEST(DataCache, LimitsCopyTheirRowsAndLeaveTheCachedSplitWhole) {
  TempMnist data("sweep_data_cache_limit");
  DataSpec spec = data.spec;
  spec.train_limit = 5;
  spec.test_limit = 3;

  const auto limited = load_data(spec, 1);
  ASSERT_EQ(limited.train.size(), 5);
  EXPECT_EQ(limited.train.images.size(), 5u * 4);
  EXPECT_EQ(limited.train.labels, (std::vector<std::uint8_t>{0, 1, 2, 3, 4}));
  ASSERT_EQ(limited.validation.size(), 3);
  EXPECT_EQ(limited.validation.images.size(), 3u * 4);

  spec.train_limit = 0;
  spec.test_limit = 0;
  const auto whole = load_data(spec, 1);
  EXPECT_EQ(whole.train.size(), 20);
  EXPECT_EQ(whole.train.images.size(), 20u * 4);
  EXPECT_EQ(whole.validation.size(), 10);
}

// Trials loading the same data share one read-only copy (no 55 MB copy and statistics pass a
// trial); another seed shares it too unless a holdout is drawn with it, and an edited data set is
// loaded again.
TEST(DataCache, TrialsOfTheSameDataShareOneLoad) {
  TempMnist data("sweep_data_cache_shared");
  const fs::path& dir = data.dir;
  const DataSpec spec = data.spec;

  const auto a = sweep::trainer::load_data_shared(spec, 1);
  EXPECT_EQ(a, sweep::trainer::load_data_shared(spec, 1));
  EXPECT_EQ(a, sweep::trainer::load_data_shared(spec, 2)) << "the test split draws nothing";
  EXPECT_EQ(a->train.images, load_data(spec, 1).train.images);

  DataSpec held = spec;
  held.validation = sweep::trainer::Validation::holdout;
  held.holdout_fraction = 0.25;
  const auto h1 = sweep::trainer::load_data_shared(held, 1);
  EXPECT_EQ(h1, sweep::trainer::load_data_shared(held, 1));
  EXPECT_NE(h1, sweep::trainer::load_data_shared(held, 2)) << "a holdout is drawn by the seed";

  write_split(dir, "train", 30, 9);  // edited: loaded again
  const auto edited = sweep::trainer::load_data_shared(spec, 1);
  EXPECT_NE(edited, a);
  EXPECT_EQ(edited->train.size(), 30);
  EXPECT_EQ(a->train.size(), 20) << "a trial still holding the old data keeps it unchanged";
}

}  // namespace
