/*
 * test_dir.h — a test's own scratch folder: made fresh for the running test (named after it and
 * the process, so parallel ctest processes never share one) and removed with everything in it
 * when the test ends.
 */
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sweep::testing {

class TestDir {
 public:
  explicit TestDir(const std::string& prefix = "sweep_test")
      : path_(std::filesystem::temp_directory_path() /
              (prefix + "_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TestDir(const TestDir&) = delete;
  TestDir& operator=(const TestDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // NAME's path inside the folder, its parent folders made.
  std::string file(const std::string& name) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    return p.string();
  }
  // Writes `bytes` to NAME (parent folders made) and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string f = file(name);
    std::ofstream(f, std::ios::binary) << bytes;
    return f;
  }
  std::string write(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    return write(name, std::string(bytes.begin(), bytes.end()));
  }

 private:
  std::filesystem::path path_;
};

}  // namespace sweep::testing
