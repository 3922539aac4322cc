/*
 * data_readers_test.cpp — idx and CIFAR-10 readers on small files the test writes, and the real
 * Fashion-MNIST when it is installed.
 *
 * Each corrupt-file test checks that the message names the file and the defect, since that message
 * is what a user sees in the sweep's failed-trial row.
 */
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "trainer/data/cifar_reader.h"
#include "trainer/data/file_bytes.h"
#include "trainer/data/idx_reader.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("sweep_data_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void put_be32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

std::vector<std::uint8_t> idx_images(std::uint32_t n, std::uint32_t h, std::uint32_t w) {
  std::vector<std::uint8_t> b;
  put_be32(b, 0x803);
  put_be32(b, n);
  put_be32(b, h);
  put_be32(b, w);
  for (std::uint32_t i = 0; i < n * h * w; ++i) b.push_back(static_cast<std::uint8_t>(i * 7));
  return b;
}

std::vector<std::uint8_t> idx_labels(const std::vector<std::uint8_t>& labels) {
  std::vector<std::uint8_t> b;
  put_be32(b, 0x801);
  put_be32(b, static_cast<std::uint32_t>(labels.size()));
  b.insert(b.end(), labels.begin(), labels.end());
  return b;
}

void write_raw(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void write_gz(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), int(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::vector<std::uint8_t> read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `f`, expects a sweep::Error whose message contains every one of `parts`.
template <class F>
void expect_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected sweep::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

TEST(IdxReader, ReadsRawFiles) {
  TempDir dir;
  write_raw(dir.file("train-images-idx3-ubyte"), idx_images(3, 2, 4));
  write_raw(dir.file("train-labels-idx1-ubyte"), idx_labels({0, 9, 4}));
  const Dataset d = read_idx_split(dir.file(""), "train", 10);
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.c, 1);
  EXPECT_EQ(d.h, 2);
  EXPECT_EQ(d.w, 4);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{0, 9, 4}));
  ASSERT_EQ(d.images.size(), 24u);
  EXPECT_EQ(d.images[5], std::uint8_t(35));
}

TEST(IdxReader, ReadsGzipFilesDetectedByMagic) {
  TempDir dir;
  write_gz(dir.file("t10k-images-idx3-ubyte.gz"), idx_images(2, 3, 3));
  write_gz(dir.file("t10k-labels-idx1-ubyte.gz"), idx_labels({1, 2}));
  Dataset d = read_idx_split(dir.file(""), "t10k", 10);
  EXPECT_EQ(d.size(), 2);
  const std::vector<std::uint8_t> file = idx_images(2, 3, 3);
  EXPECT_EQ(d.images, std::vector<std::uint8_t>(file.begin() + 16, file.end()));
  // gzip content under a plain name loads too: detection is by magic bytes, not by suffix.
  write_gz(dir.file("renamed"), idx_images(2, 3, 3));
  d = read_idx_pair(dir.file("renamed"), dir.file("t10k-labels-idx1-ubyte.gz"), 10);
  EXPECT_EQ(d.size(), 2);
}

TEST(IdxReader, MissingFileIsNamed) {
  TempDir dir;
  expect_error([&] { read_idx_split(dir.file(""), "train", 10); },
               {"train-images-idx3-ubyte", "missing"});
}

TEST(IdxReader, TruncatedRawFileGivesByteCounts) {
  TempDir dir;
  auto img = idx_images(3, 2, 4);
  img.resize(img.size() - 5);
  write_raw(dir.file("i"), img);
  write_raw(dir.file("l"), idx_labels({0, 1, 2}));
  expect_error([&] { read_idx_pair(dir.file("i"), dir.file("l"), 10); },
               {dir.file("i"), "truncated", "expected 40 bytes", "got 35"});
}

TEST(IdxReader, TruncatedGzipStreamIsReported) {
  TempDir dir;
  write_gz(dir.file("i.gz"), idx_images(50, 8, 8));
  auto gz = read_raw(dir.file("i.gz"));
  gz.resize(gz.size() / 2);
  write_raw(dir.file("i.gz"), gz);
  write_raw(dir.file("l"), idx_labels(std::vector<std::uint8_t>(50, 1)));
  expect_error([&] { read_idx_pair(dir.file("i.gz"), dir.file("l"), 10); },
               {dir.file("i.gz"), "truncated"});
}

// The gunzip starts its buffer at the size the file's last trailer gives. Two concatenated gzip
// members (what `cat a.gz b.gz` makes): that size is the second member's only, and the buffer
// grows to hold both. A trailer whose size was altered: zlib's length check reports it.
TEST(IdxReader, GzipTrailerSizeIsOnlyAGuess) {
  TempDir dir;
  const std::vector<std::uint8_t> img = idx_images(50, 8, 8);
  const std::size_t split = 1000;
  write_gz(dir.file("a.gz"), {img.begin(), img.begin() + split});
  write_gz(dir.file("b.gz"), {img.begin() + split, img.end()});
  std::vector<std::uint8_t> both = read_raw(dir.file("a.gz"));
  const std::vector<std::uint8_t> b = read_raw(dir.file("b.gz"));
  both.insert(both.end(), b.begin(), b.end());
  write_raw(dir.file("i.gz"), both);
  write_raw(dir.file("l"), idx_labels(std::vector<std::uint8_t>(50, 1)));
  const Dataset d = read_idx_pair(dir.file("i.gz"), dir.file("l"), 10);
  ASSERT_EQ(d.size(), 50);
  EXPECT_TRUE(std::equal(d.images.begin(), d.images.end(), img.begin() + 16));

  for (const std::uint32_t wrong : {std::uint32_t{7}, std::uint32_t{0xfffffff0u}}) {
    std::vector<std::uint8_t> gz = read_raw(dir.file("b.gz"));
    for (int i = 0; i < 4; ++i) gz[gz.size() - 4 + i] = std::uint8_t(wrong >> (8 * i));
    write_raw(dir.file("w.gz"), gz);
    expect_error([&] { read_file_bytes(dir.file("w.gz")); }, {dir.file("w.gz"), "corrupt"});
  }
}

TEST(IdxReader, BadMagicIsReported) {
  TempDir dir;
  write_raw(dir.file("i"), idx_labels({1, 2}));  // a labels file where images belong
  write_raw(dir.file("l"), idx_labels({1, 2}));
  expect_error([&] { read_idx_pair(dir.file("i"), dir.file("l"), 10); },
               {dir.file("i"), "bad magic", "0x00000801", "0x00000803"});
}

TEST(IdxReader, CountMismatchNamesBothFiles) {
  TempDir dir;
  write_raw(dir.file("i"), idx_images(3, 2, 2));
  write_raw(dir.file("l"), idx_labels({1, 2}));
  expect_error([&] { read_idx_pair(dir.file("i"), dir.file("l"), 10); },
               {dir.file("i"), "3 images", dir.file("l"), "2 labels"});
}

TEST(IdxReader, LabelOutOfRange) {
  TempDir dir;
  write_raw(dir.file("i"), idx_images(3, 2, 2));
  write_raw(dir.file("l"), idx_labels({1, 10, 2}));
  expect_error([&] { read_idx_pair(dir.file("i"), dir.file("l"), 10); },
               {dir.file("l"), "label 10", "index 1", "out of range"});
}

std::vector<std::uint8_t> cifar_records(const std::vector<std::uint8_t>& labels) {
  std::vector<std::uint8_t> b;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    b.push_back(labels[r]);
    for (int i = 0; i < 3072; ++i) b.push_back(static_cast<std::uint8_t>(i + r));
  }
  return b;
}

TEST(CifarReader, ReadsBatchesInOrder) {
  TempDir dir;
  for (int i = 1; i <= 5; ++i)
    write_raw(dir.file("data_batch_" + std::to_string(i) + ".bin"),
              cifar_records({std::uint8_t(i), std::uint8_t(9 - i)}));
  write_raw(dir.file("test_batch.bin"), cifar_records({3}));
  const Dataset train = read_cifar10_split(dir.file(""), "train");
  EXPECT_EQ(train.size(), 10);
  EXPECT_EQ(train.c, 3);
  EXPECT_EQ(train.h, 32);
  EXPECT_EQ(train.labels[0], 1);
  EXPECT_EQ(train.labels[9], 4);
  EXPECT_EQ(train.images[3072 + 5], std::uint8_t(6));  // record 1 of batch 1, byte 5 = 5 + 1
  const Dataset test = read_cifar10_split(dir.file(""), "test");
  EXPECT_EQ(test.size(), 1);
  // The archive unpacks into cifar-10-batches-bin/: its parent directory works too.
  fs::create_directories(dir.file("cifar-10-batches-bin"));
  write_raw(dir.file("cifar-10-batches-bin/test_batch.bin"), cifar_records({7, 8, 9}));
  fs::remove(dir.file("test_batch.bin"));
  EXPECT_EQ(read_cifar10_split(dir.file(""), "test").size(), 3);
}

TEST(CifarReader, TruncatedAndBadLabelAndMissing) {
  TempDir dir;
  auto rec = cifar_records({1, 2});
  rec.pop_back();
  write_raw(dir.file("a.bin"), rec);
  expect_error([&] { read_cifar10_files({dir.file("a.bin")}); },
               {dir.file("a.bin"), "truncated", "expected 6146", "got 6145"});
  write_raw(dir.file("b.bin"), cifar_records({1, 12}));
  expect_error([&] { read_cifar10_files({dir.file("b.bin")}); },
               {dir.file("b.bin"), "label 12", "record 1"});
  expect_error([&] { read_cifar10_split(dir.file(""), "test"); }, {"test_batch.bin", "missing"});
}

TEST(FashionMnist, RealFilesWhenInstalled) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(dir + "/train-images-idx3-ubyte.gz") &&
      !fs::exists(dir + "/train-images-idx3-ubyte"))
    GTEST_SKIP() << "Fashion-MNIST is not installed at " << dir
                 << " (Debian package dataset-fashion-mnist)";
  const Dataset train = read_idx_split(dir, "train", 10);
  const Dataset test = read_idx_split(dir, "t10k", 10);
  EXPECT_EQ(train.size(), 60000);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(train.h, 28);
  EXPECT_EQ(train.w, 28);
  EXPECT_EQ(test.h, 28);
  std::vector<int> per_class(10, 0);
  for (auto l : train.labels) {
    ASSERT_LT(l, 10);
    ++per_class[l];
  }
  for (int c : per_class) EXPECT_EQ(c, 6000);  // Fashion-MNIST is balanced
  for (auto l : test.labels) ASSERT_LT(l, 10);
}

}  // namespace
}  // namespace sweep::trainer
