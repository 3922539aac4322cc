/*
 * npy_reader_test.cpp — the .npy reader on files numpy wrote (tests/trainer/numpy, made by
 * make_files.py there) and on headers the test writes: every version, and every refusal with its
 * message naming the file and the fault.
 */
#include "trainer/data/npy_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/check.h"

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

const std::string kNumpyDir = std::string(SWEEP_SOURCE_DIR) + "/tests/trainer/numpy";

// An .npy image: the preamble of `version` (1, 2 or 3), `header` padded as numpy pads it, `data`.
std::vector<std::uint8_t> npy_bytes(const std::string& header,
                                    const std::vector<std::uint8_t>& data, int version = 1) {
  const std::size_t lead = version == 1 ? 10 : 12;
  std::string h = header;
  while ((lead + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::vector<std::uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', std::uint8_t(version), 0};
  for (std::size_t i = 0; i < lead - 8; ++i) out.push_back(std::uint8_t(h.size() >> (8 * i)));
  out.insert(out.end(), h.begin(), h.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

class TempFile {
 public:
  explicit TempFile(const std::vector<std::uint8_t>& bytes)
      : path_((fs::temp_directory_path() /
               ("sweep_npy_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".npy"))
                  .string()) {
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The message read_npy throws for `bytes`, or "" when it reads.
std::string refusal(const std::vector<std::uint8_t>& bytes) {
  const TempFile f(bytes);
  try {
    read_npy(f.path());
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(f.path()), std::string::npos) << "the message names the file: " << what;
    return what;
  }
  return "";
}

TEST(NpyReader, ReadsEveryVersionNumpyWrites) {
  for (const char* name : {"v1.npy", "v2.npy", "v3.npy"}) {
    const NpyArray a = read_npy(kNumpyDir + "/" + name);
    EXPECT_EQ(a.header.dtype, NpyDtype::f4) << name;
    EXPECT_EQ(a.header.shape, (std::vector<std::int64_t>{2, 2})) << name;
    EXPECT_EQ(npy_floats(a, name), (std::vector<float>{1.5f, 2.5f, 3.5f, -4.0f})) << name;
    EXPECT_EQ(read_npy_header(kNumpyDir + "/" + name).data_offset, a.header.data_offset);
  }
}

TEST(NpyReader, ReadsEachIntegerDtypeAndShapeForms) {
  const std::vector<std::uint8_t> two = {0xfe, 0xff, 0x05, 0x00};  // int16 -2, 5
  const TempFile f(npy_bytes(dict("<i2", "(2,)"), two));
  const NpyArray a = read_npy(f.path());
  EXPECT_EQ(npy_integers(a, "a"), (std::vector<std::int64_t>{-2, 5}));
  // A byte-order-free single byte, a scalar shape, a Python 2 long and double quotes all read.
  EXPECT_EQ(refusal(npy_bytes(dict("|u1", "()"), {7})), "");
  EXPECT_EQ(refusal(npy_bytes(dict("|u1", "(1L, 2L)"), {7, 8})), "");
  EXPECT_EQ(
      refusal(npy_bytes("{\"descr\": \"|i1\", \"shape\": (0,), \"fortran_order\": False}", {})),
      "");
}

TEST(NpyReader, RefusesUnsupportedDtypesNamingThem) {
  EXPECT_NE(refusal(npy_bytes(dict("<c8", "(1,)"), std::vector<std::uint8_t>(8)))
                .find("dtype '<c8' is not read (read are uint8, int8"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("<f2", "(1,)"), {0, 0})).find("dtype '<f2' is not read"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("|O", "(1,)"), std::vector<std::uint8_t>(8)))
                .find("an object array (pickled Python objects) is not read"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict(">f4", "(1,)"), {0, 0, 0, 0}))
                .find("dtype '>f4' (float32) is big-endian"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                              {0, 0, 0, 0}))
                .find("structured (record) dtypes are not read"),
            std::string::npos);
}

TEST(NpyReader, RefusesFortranOrder) {
  EXPECT_NE(refusal(npy_bytes(dict("|u1", "(2, 2)", true), {1, 2, 3, 4}))
                .find("Fortran-order (column-major) arrays are not read"),
            std::string::npos);
}

TEST(NpyReader, RefusesMalformedHeaders) {
  const std::vector<std::uint8_t> one = {1};
  EXPECT_NE(refusal({'P', 'K', 3, 4}).find("not an .npy file"), std::string::npos);
  auto v4 = npy_bytes(dict("|u1", "(1,)"), one);
  v4[6] = 4;
  EXPECT_NE(refusal(v4).find(".npy format version 4.0 is not read"), std::string::npos);
  EXPECT_NE(refusal(npy_bytes("{'descr': '|u1', 'shape': (1,), }", one))
                .find("the header has no 'fortran_order'"),
            std::string::npos);
  EXPECT_NE(
      refusal(npy_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (1,), 'x': 1}", one))
          .find("unknown key 'x'"),
      std::string::npos);
  EXPECT_NE(refusal(npy_bytes("{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, "
                              "'shape': (1,)}",
                              one))
                .find("'descr' appears twice"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("|u1", "(1)"), one)).find("a one-axis shape is written (n,)"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("|u1", "(-1,)"), one)).find("expected a size in the shape"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("|u1", "(1,)") + " x", one))
                .find("does not end in spaces and a newline"),
            std::string::npos);
  // A header length past the file's end.
  auto cut = npy_bytes(dict("|u1", "(1,)"), one);
  cut.resize(40);
  EXPECT_NE(refusal(cut).find("truncated (its header claims"), std::string::npos);
}

TEST(NpyReader, RefusesDataOfAnotherSizeThanTheShape) {
  EXPECT_NE(refusal(npy_bytes(dict("<f4", "(3,)"), std::vector<std::uint8_t>(8)))
                .find("truncated (shape (3,) of float32 needs 12 bytes of data, the file has 8)"),
            std::string::npos);
  EXPECT_NE(refusal(npy_bytes(dict("|u1", "(2,)"), {1, 2, 3})).find("1 bytes follow the data"),
            std::string::npos);
}

TEST(NpyReader, RefusesAHugeClaimedSizeBeforeReading) {
  // 50 GB claimed by a 128-byte file: refused by the header's size, whatever the file holds.
  const std::string huge = refusal(npy_bytes(dict("|u1", "(50000000000,)"), {1}));
  EXPECT_NE(huge.find("the data its header claims (shape (50000000000,) of uint8) is "
                      "50000000000 bytes"),
            std::string::npos)
      << huge;
  EXPECT_NE(huge.find("a data set may take"), std::string::npos) << huge;
  // A shape whose product wraps around 2^64 is refused as such, not read as small.
  EXPECT_NE(refusal(npy_bytes(dict("<f8", "(4294967296, 4294967296)"), {}))
                .find("claims more than 2^64 bytes"),
            std::string::npos);
}

TEST(NpyReader, RefusesNonFiniteAndOutOfRangeFloats) {
  double values[2] = {1.0, 1e300};
  std::vector<std::uint8_t> data(16);
  std::memcpy(data.data(), values, 16);
  const TempFile f(npy_bytes(dict("<f8", "(2,)"), data));
  const NpyArray a = read_npy(f.path());
  try {
    npy_floats(a, "x.npy");
    FAIL() << "1e300 read as a float";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.npy: element 1 is"), std::string::npos) << e.what();
  }
  values[1] = std::nan("");
  std::memcpy(data.data(), values, 16);
  const TempFile g(npy_bytes(dict("<f8", "(2,)"), data));
  EXPECT_THROW(npy_floats(read_npy(g.path()), "x.npy"), Error);
}

TEST(NpyReader, RefusesAMissingFile) {
  try {
    read_npy("/nonexistent/x_train.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/x_train.npy: no such file");
  }
}

}  // namespace
}  // namespace sweep::trainer
