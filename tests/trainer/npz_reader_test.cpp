/*
 * npz_reader_test.cpp — .npz archives (np.savez and np.savez_compressed output, in
 * tests/trainer/numpy) and directories of .npy files into Datasets; zip64 directories, corrupt and
 * truncated archives and every x / y mismatch, each refusal's message checked.
 */
#include "trainer/data/npz_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/check.h"
#include "tests/test_dir.h"
#include "trainer/data/numpy_data.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

const std::string kNumpyDir = std::string(SWEEP_SOURCE_DIR) + "/tests/trainer/numpy";

std::vector<std::uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_npz_test") {}
};

std::vector<std::uint8_t> npy_bytes(const std::string& descr, const std::string& shape,
                                    const std::vector<std::uint8_t>& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::vector<std::uint8_t> out = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, std::uint8_t(h.size()), std::uint8_t(h.size() >> 8)};
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void put(std::vector<std::uint8_t>& b, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(std::uint8_t(v >> (8 * i)));
}

// A zip of stored members. zip64: every size and offset in the directory through the zip64
// extra field, and the end record through the zip64 end record (what a writer does for
// archives over 4 GiB); `claimed_size`, when set, is the size the directory gives member 0.
std::vector<std::uint8_t> stored_zip(
    const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& members, bool zip64,
    std::uint64_t claimed_size = 0) {
  std::vector<std::uint8_t> out, dir;
  for (std::size_t m = 0; m < members.size(); ++m) {
    const auto& [name, data] = members[m];
    const std::uint64_t offset = out.size();
    const auto crc = std::uint32_t(crc32(0, data.data(), uInt(data.size())));
    const std::uint64_t size = m == 0 && claimed_size ? claimed_size : data.size();
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, 0, 2), put(out, 0, 4);
    put(out, crc, 4), put(out, data.size(), 4), put(out, data.size(), 4);
    put(out, name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());
    put(dir, 0x02014b50, 4), put(dir, 45, 2), put(dir, 45, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, 0, 4), put(dir, crc, 4);
    put(dir, zip64 ? 0xFFFFFFFF : size, 4), put(dir, zip64 ? 0xFFFFFFFF : size, 4);
    put(dir, name.size(), 2), put(dir, zip64 ? 28 : 0, 2), put(dir, 0, 2), put(dir, 0, 2);
    put(dir, 0, 2), put(dir, 0, 4), put(dir, zip64 ? 0xFFFFFFFF : offset, 4);
    dir.insert(dir.end(), name.begin(), name.end());
    if (zip64)
      put(dir, 1, 2), put(dir, 24, 2), put(dir, size, 8), put(dir, size, 8), put(dir, offset, 8);
  }
  const std::uint64_t dir_offset = out.size();
  out.insert(out.end(), dir.begin(), dir.end());
  if (zip64) {
    const std::uint64_t end64 = out.size();
    put(out, 0x06064b50, 4), put(out, 44, 8), put(out, 45, 2), put(out, 45, 2), put(out, 0, 4);
    put(out, 0, 4), put(out, members.size(), 8), put(out, members.size(), 8);
    put(out, dir.size(), 8), put(out, dir_offset, 8);
    put(out, 0x07064b50, 4), put(out, 0, 4), put(out, end64, 8), put(out, 1, 4);
  }
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2);
  put(out, zip64 ? 0xFFFF : members.size(), 2), put(out, zip64 ? 0xFFFF : members.size(), 2);
  put(out, zip64 ? 0xFFFFFFFF : dir.size(), 4), put(out, zip64 ? 0xFFFFFFFF : dir_offset, 4);
  put(out, 0, 2);
  return out;
}

template <class F>
std::string refusal(F read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(NpzReader, ReadsNumpySavezAndSavezCompressed) {
  for (const char* name : {"images.npz", "images_compressed.npz"}) {
    const std::string path = kNumpyDir + "/" + name;
    const ZipArchive zip(path);
    ASSERT_EQ(zip.entries().size(), 4u) << name;
    EXPECT_EQ(zip.entries()[0].name, "x_train.npy");
    const Dataset train = read_numpy_split(path, "train", {});
    EXPECT_EQ(train.source, path + ":x_train.npy");
    EXPECT_EQ(train.c, 1);
    EXPECT_EQ(train.h, 2);
    EXPECT_EQ(train.w, 3);
    EXPECT_EQ(train.classes, 3);
    ASSERT_EQ(train.images.size(), 24u);
    for (std::size_t i = 0; i < 24; ++i) EXPECT_EQ(train.images[i], i);
    EXPECT_EQ(train.labels, (std::vector<std::uint8_t>{0, 1, 2, 1}));
    const Dataset test = read_numpy_split(path, "test", {});
    EXPECT_EQ(test.classes, 3) << "both splits count the same classes";
    EXPECT_EQ(test.labels, (std::vector<std::uint8_t>{2, 0}));
    EXPECT_EQ(test.images[0], 100);
    const NumpyShape shape = numpy_shape(path, {});
    EXPECT_EQ(shape.c * 100 + shape.h * 10 + shape.w, 123);
    EXPECT_EQ(shape.classes, 3);
  }
}

TEST(NpzReader, TransposesNhwcToNchw) {
  const std::string path = kNumpyDir + "/nhwc.npz";
  const Dataset d = read_numpy_split(path, "train", {Layout::nhwc, Task::classification});
  ASSERT_EQ(d.c, 2);
  ASSERT_EQ(d.h, 2);
  ASSERT_EQ(d.w, 3);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k)
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c)
          EXPECT_EQ(d.images[std::size_t(i * 12 + k * 6 + r * 3 + c)],
                    100 * i + 10 * k + 3 * r + c);
  // Read as NCHW the same array is 2 samples of 2 channels of 3 x 2.
  const Dataset as_nchw = read_numpy_split(path, "train", {});
  EXPECT_EQ(as_nchw.c * 100 + as_nchw.h * 10 + as_nchw.w, 232);
}

TEST(NpzReader, ReadsFloatFeaturesAndRegressionTargets) {
  const std::string path = kNumpyDir + "/regression.npz";
  const Dataset d = read_numpy_split(path, "train", {Layout::nchw, Task::regression});
  EXPECT_EQ(d.c, 3);
  EXPECT_EQ(d.h * d.w, 1);
  EXPECT_EQ(d.classes, 0);
  EXPECT_TRUE(d.is_float());
  EXPECT_TRUE(d.is_regression());
  EXPECT_EQ(d.features[1], -1.25f);
  EXPECT_EQ(d.features[6], 1e-3f);
  EXPECT_EQ(d.targets, (std::vector<float>{1.5f, -2.0f, 0.25f}));
  EXPECT_NE(d.source.find("float64, converted to float32"), std::string::npos);
  EXPECT_EQ(numpy_shape(path, {Layout::nchw, Task::regression}).classes, 0);
  // Float targets with task: classification are refused with the reason.
  EXPECT_NE(refusal([&] {
              read_numpy_split(path, "train", {});
            }).find(path + ":y_train.npy: float32 labels, but data.task is classification"),
            std::string::npos);
}

TEST(NpzReader, ReadsADirectoryOfNpyFiles) {
  const TempDir dir;
  dir.write("x_train.npy", npy_bytes("<f4", "(2, 1)", {0, 0, 128, 63, 0, 0, 0, 64}));  // 1, 2
  dir.write("y_train.npy",
            npy_bytes("<i8", "(2, 1)", {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  const Dataset d = read_numpy_split(dir.path().string(), "train", {});
  EXPECT_EQ(d.features, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(d.classes, 2);
  EXPECT_EQ(numpy_missing_arrays(dir.path().string(), true), "x_test.npy, y_test.npy");
  EXPECT_EQ(numpy_missing_arrays(dir.path().string(), false), "");
}

TEST(NpzReader, RefusesMismatchedLengthsAndBadArrays) {
  const TempDir dir;
  const std::string d = dir.path().string();
  dir.write("x_train.npy", npy_bytes("|u1", "(3, 2)", {1, 2, 3, 4, 5, 6}));
  dir.write("y_train.npy", npy_bytes("|u1", "(2,)", {0, 1}));
  EXPECT_EQ(refusal([&] { read_numpy_split(d, "train", {}); }),
            dir.file("x_train.npy") + " has 3 rows, " + dir.file("y_train.npy") +
                " 2: x and y need one row each per sample");
  dir.write("y_train.npy", npy_bytes("<i2", "(3,)", {0, 0, 44, 1, 1, 0}));  // 0, 300, 1
  EXPECT_EQ(refusal([&] { read_numpy_split(d, "train", {}); }),
            dir.file("y_train.npy") + ": row 1 has label 300 (class labels are 0..255)");
  dir.write("y_train.npy", npy_bytes("|i1", "(3,)", {0, 255, 1}));  // 0, -1, 1
  EXPECT_EQ(refusal([&] { read_numpy_split(d, "train", {}); }),
            dir.file("y_train.npy") + ": row 1 has label -1 (class labels are 0..255)");
  dir.write("y_train.npy", npy_bytes("|u1", "(3, 2)", {0, 0, 0, 0, 0, 0}));
  EXPECT_NE(refusal([&] {
              read_numpy_split(d, "train", {});
            }).find("shape (3, 2) is not read (y is (N,) or (N, 1))"),
            std::string::npos);
  dir.write("y_train.npy", npy_bytes("|u1", "(3,)", {0, 1, 0}));
  dir.write("x_train.npy", npy_bytes("<i4", "(3,)", std::vector<std::uint8_t>(12)));
  EXPECT_NE(refusal([&] { read_numpy_split(d, "train", {}); }).find("shape (3,) is not read"),
            std::string::npos);
  dir.write("x_train.npy", npy_bytes("<i4", "(3, 1)", std::vector<std::uint8_t>(12)));
  EXPECT_EQ(refusal([&] { read_numpy_split(d, "train", {}); }),
            dir.file("x_train.npy") +
                ": dtype int32 is not read for x (uint8 images, or float32 / float64 features)");
  EXPECT_EQ(refusal([&] { read_numpy_split(d, "test", {}); }),
            dir.file("x_test.npy") + ": missing (data.dataset: numpy)");
}

TEST(NpzReader, ReadsZip64Directories) {
  const auto x = npy_bytes("|u1", "(2, 2)", {1, 2, 3, 4});
  const auto y = npy_bytes("|u1", "(2,)", {1, 0});
  const TempDir dir;
  const std::string path =
      dir.write("z.npz", stored_zip({{"x_train.npy", x}, {"y_train.npy", y}}, true));
  const ZipArchive zip(path);
  ASSERT_EQ(zip.entries().size(), 2u);
  EXPECT_EQ(zip.entries()[1].size, y.size());
  EXPECT_EQ(zip.read(zip.entries()[1]), y);
  const Dataset d = read_numpy_split(path, "train", {});
  EXPECT_EQ(d.c, 2);
  EXPECT_EQ(d.images, (std::vector<std::uint8_t>{1, 2, 3, 4}));
}

TEST(NpzReader, RefusesAHugeMemberBeforeReading) {
  const auto x = npy_bytes("|u1", "(2, 2)", {1, 2, 3, 4});
  const TempDir dir;
  const std::string path =
      dir.write("z.npz", stored_zip({{"x_train.npy", x}}, true, std::uint64_t(50) << 30));
  const ZipArchive zip(path);
  EXPECT_NE(refusal([&] {
              zip.read(zip.entries()[0]);
            }).find(path + ": member x_train.npy is 53687091200 bytes"),
            std::string::npos);
}

TEST(NpzReader, RefusesCorruptAndTruncatedArchives) {
  const TempDir dir;
  auto stored = file_bytes(kNumpyDir + "/images.npz");
  // Flip one data byte of x_train (stored): the CRC catches it.
  const ZipArchive good(kNumpyDir + "/images.npz");
  auto flipped = stored;
  flipped[30 + 11 + 20 + 128 + 5] ^= 0x40;  // inside x_train.npy's data
  const std::string f = dir.write("flipped.npz", flipped);
  EXPECT_EQ(refusal([&] { read_numpy_split(f, "train", {}); }),
            f + " (member x_train.npy): CRC-32 mismatch (the data is corrupt)");
  // The end cut off: no end record.
  const decltype(stored) cut(stored.begin(), stored.end() - 30);
  const std::string c = dir.write("cut.npz", cut);
  EXPECT_EQ(refusal([&] { ZipArchive{c}; }),
            c + ": not a zip archive (.npz): no end-of-central-directory record");
  // Compressed data damaged: inflate or the CRC refuses it, naming the member.
  auto deflated = file_bytes(kNumpyDir + "/images_compressed.npz");
  for (std::size_t i = 60; i < 90; ++i) deflated[i] ^= 0x5a;
  const std::string d = dir.write("damaged.npz", deflated);
  EXPECT_NE(refusal([&] { read_numpy_split(d, "train", {}); }).find(d + " (member x_train.npy)"),
            std::string::npos);
  // Not a zip at all.
  const std::string t = dir.write("text.npz", std::string("hello"));
  EXPECT_NE(refusal([&] { ZipArchive{t}; }).find("not a zip archive"), std::string::npos);
  // A member that is not there, with what is.
  const std::string s =
      dir.write("only_x.npz", stored_zip({{"x_train.npy", npy_bytes("|u1", "(1,)", {0})}}, false));
  EXPECT_EQ(refusal([&] { numpy_shape(s, {}); }),
            s + ":y_train.npy: missing (data.dataset: numpy)");
}

}  // namespace
}  // namespace sweep::trainer
