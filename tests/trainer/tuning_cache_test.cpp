/*
 * tuning_cache_test.cpp — the file of timed kernel choices: a choice put by one process is found
 * by the next, only under its own fingerprint; damaged lines are dropped, never trusted; a place
 * that cannot be written keeps choices in memory; writers at once lose nothing.
 */
#include "trainer/backend/tuning_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sweep::trainer {
namespace {

namespace fs = std::filesystem;

class TuningCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sweep-tuning-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / "sub" / "tuning.tsv"; }
  std::string text() const {
    std::ifstream in(file());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

const std::vector<long long> kKey{0, 64, 6, 12, 12, 16, 5, 5, 0, 0, 8, 8, 8};

TEST_F(TuningCacheTest, AChoicePutByOneProcessIsFoundByTheNext) {
  {
    TuningCache first(file());
    EXPECT_FALSE(first.find("H200 sm90", "conv_kernels", kKey));
    first.put("H200 sm90", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
    EXPECT_EQ(first.find("H200 sm90", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
  }
  TuningCache next(file());  // a later process: reads the file
  EXPECT_EQ(next.find("H200 sm90", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
  EXPECT_FALSE(next.find("H200 sm90", "cudnn_conv", kKey));  // another kind
  std::vector<long long> other = kKey;
  other.back() = 9;
  EXPECT_FALSE(next.find("H200 sm90", "conv_kernels", other));  // another shape
  // Sizes and times as a cuDNN choice holds them: large integers exactly, infinity too.
  const std::vector<double> cudnn{
      1, 0, 3, 1, 1, 1, 9007199254740992.0, std::numeric_limits<double>::infinity()};
  next.put("H200 sm90", "cudnn_conv", kKey, cudnn);
  EXPECT_EQ(TuningCache(file()).find("H200 sm90", "cudnn_conv", kKey), cudnn);
}

TEST_F(TuningCacheTest, AnotherFingerprintsChoicesAreKeptButNeverUsed) {
  TuningCache(file()).put("H100 sm90 driver 580", "conv_kernels", kKey,
                          std::vector<double>{1, 1, 1});
  TuningCache h200(file());
  EXPECT_FALSE(h200.find("H200 sm90 driver 580", "conv_kernels", kKey));
  h200.put("H200 sm90 driver 580", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
  TuningCache later(file());
  EXPECT_EQ(later.count("H100 sm90 driver 580", "conv_kernels"), 1u);
  EXPECT_EQ(later.count("H200 sm90 driver 580", "conv_kernels"), 1u);
  EXPECT_EQ(later.count("H200 sm90 driver 580", "cudnn_conv"), 0u);
  EXPECT_EQ(later.find("H100 sm90 driver 580", "conv_kernels", kKey),
            (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(later.find("H200 sm90 driver 580", "conv_kernels", kKey),
            (std::vector<double>{2, 3, 2}));
}

TEST_F(TuningCacheTest, DamagedLinesAreDroppedNeverTrusted) {
  TuningCache(file()).put("gpu", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
  const std::string good = text();
  ASSERT_EQ(std::count(good.begin(), good.end(), '\n'), 1);
  const std::string fingerprint = good.substr(0, 16);
  {
    std::ofstream out(file(), std::ios::app);
    out << fingerprint << "\tconv_kernels\t1,2,3\t2,3\n";       // kept: a well-formed line
    out << fingerprint << "\tconv_kernels\t1,2,4\t2,nan\n";     // NaN
    out << fingerprint << "\tconv_kernels\t1,2,5\t2,3x\n";      // trailing text
    out << fingerprint << "\tconv_kernels\t1,,6\t2\n";          // an empty number
    out << fingerprint << "\tConv\t1,2,7\t2\n";                 // a kind we never write
    out << fingerprint << "\tconv_kernels\t1,2,8\t2\textra\n";  // a fifth field
    out << "xyz\tconv_kernels\t1,2,9\t2\n";                     // no fingerprint
    out << fingerprint << "\tconv_kernels\t1,2,10\t1e999\n";    // beyond a double
    out << fingerprint << "\tconv_kernels\t1,2";                // cut off
  }
  TuningCache read(file());
  EXPECT_EQ(read.find("gpu", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
  EXPECT_EQ(read.find("gpu", "conv_kernels", std::vector<long long>{1, 2, 3}),
            (std::vector<double>{2, 3}));
  for (long long bad : {4, 5, 8, 10})
    EXPECT_FALSE(read.find("gpu", "conv_kernels", std::vector<long long>{1, 2, bad})) << bad;
  // The next write keeps what parses and drops the rest.
  read.put("gpu", "nhwc_conv_faster", kKey, std::vector<double>{1});
  const std::string after = text();
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 3) << after;
  EXPECT_EQ(after.find("nan"), std::string::npos);
  EXPECT_EQ(after.find("Conv"), std::string::npos);
}

TEST_F(TuningCacheTest, APlaceThatCannotBeWrittenKeepsChoicesForTheProcess) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "sub") << "a file where the directory should be";
  TuningCache cache(file());
  testing::internal::CaptureStderr();
  cache.put("gpu", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
  cache.put("gpu", "conv_kernels", std::vector<long long>{1}, std::vector<double>{1, 1, 1});
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(cache.find("gpu", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
  // One note, naming the place and the way out.
  EXPECT_NE(said.find("tuning cache could not be written"), std::string::npos) << said;
  EXPECT_NE(said.find("SWEEP_TUNING_CACHE"), std::string::npos) << said;
  EXPECT_EQ(said.find("tuning cache", said.find("tuning cache") + 1), std::string::npos) << said;
  // In memory only: nothing written, nothing said.
  TuningCache memory{fs::path()};
  memory.put("gpu", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
  EXPECT_EQ(memory.find("gpu", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
}

// A link planted at the lock's name: never followed (no file made where it points), the choice
// kept in memory, one note.
TEST_F(TuningCacheTest, ALinkAtTheLocksNameIsNotFollowed) {
  fs::create_directories(file().parent_path());
  const fs::path target = dir_ / "not-ours";
  fs::create_symlink(target, file().string() + ".lock");
  TuningCache cache(file());
  testing::internal::CaptureStderr();
  cache.put("gpu", "conv_kernels", kKey, std::vector<double>{2, 3, 2});
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(fs::exists(target)) << "the lock's link was followed";
  EXPECT_FALSE(fs::exists(file()));
  EXPECT_NE(said.find("could not be written"), std::string::npos) << said;
  EXPECT_EQ(cache.find("gpu", "conv_kernels", kKey), (std::vector<double>{2, 3, 2}));
}

TEST_F(TuningCacheTest, WritersAtOnceLoseNothing) {
  // Each thread a process of its own (its own TuningCache, its own lock file descriptor).
  constexpr int kWriters = 4, kEach = 20;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([this, w] {
      TuningCache cache(file());
      for (int i = 0; i < kEach; ++i)
        cache.put("gpu", "conv_kernels", std::vector<long long>{w, i},
                  std::vector<double>{1.0 * i});
    });
  for (std::thread& t : writers) t.join();
  TuningCache read(file());
  for (int w = 0; w < kWriters; ++w)
    for (int i = 0; i < kEach; ++i)
      EXPECT_EQ(read.find("gpu", "conv_kernels", std::vector<long long>{w, i}),
                (std::vector<double>{1.0 * i}))
          << w << " " << i;
  for (const auto& entry : fs::directory_iterator(file().parent_path()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

// The process's cache is read once, at its first use: nothing else in this test program uses it.
TEST(TuningCacheProcess, SweepTuningCacheNamesTheFile) {
  const fs::path file = fs::temp_directory_path() / "sweep-tuning-env" / "choices.tsv";
  ASSERT_EQ(::setenv("SWEEP_TUNING_CACHE", file.c_str(), 1), 0);
  EXPECT_EQ(tuning_cache().file(), file);
  ::unsetenv("SWEEP_TUNING_CACHE");
}

}  // namespace
}  // namespace sweep::trainer
