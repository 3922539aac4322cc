/*
 * sweep_home_test.cpp — $SWEEP_HOME first, else ~/.sweep, else none.
 */
#include "common/sweep_home.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

namespace sweep {
namespace {

// Sets (or, for null, unsets) an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~EnvVar() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(SweepHome, SweepHomeThenHomeThenNone) {
  {
    EnvVar sweep_home_var("SWEEP_HOME", "/srv/sweep"), home("HOME", "/home/ada");
    EXPECT_EQ(sweep_home(), std::filesystem::path("/srv/sweep"));
  }
  {
    EnvVar sweep_home_var("SWEEP_HOME", ""), home("HOME", "/home/ada");
    EXPECT_EQ(sweep_home(), std::filesystem::path("/home/ada/.sweep"));
  }
  {
    EnvVar sweep_home_var("SWEEP_HOME", nullptr), home("HOME", nullptr);
    EXPECT_EQ(sweep_home(), std::nullopt);
  }
}

}  // namespace
}  // namespace sweep
