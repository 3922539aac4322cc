// CallError: users read which library call failed and why, never where in our source; the
// source location stays available for a debug log.
#include "common/check.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <string>

namespace sweep {
namespace {

int fails_with(int error) {
  errno = error;
  return -1;
}

TEST(CallError, WhatNamesTheCallAndTheReasonNotOurSource) {
  try {
    SWEEP_CHECK_SYS(fails_with(ENOSPC));
    FAIL() << "no exception";
  } catch (const CallError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "fails_with() failed: No space left on device");
    EXPECT_EQ(what.find(".cpp"), std::string::npos) << what;
    EXPECT_NE(e.debug_text().find("check_test.cpp:"), std::string::npos) << e.debug_text();
    EXPECT_EQ(e.call(), "fails_with(ENOSPC)");
  }
}

TEST(CallError, FunctionOfSkipsAssignmentsAndOurWrappers) {
  EXPECT_EQ(CallError::function_of("rc = sqlite3_step(stmt_.get())"), "sqlite3_step()");
  EXPECT_EQ(CallError::function_of("n = unless_would_block(::write(fd, p, n))"), "write()");
  EXPECT_EQ(CallError::function_of("::fsync(fd)"), "fsync()");
  EXPECT_EQ(CallError::function_of("cudaMalloc(&p, bytes)"), "cudaMalloc()");
  EXPECT_EQ(CallError::function_of("no call here"), "no call here");
}

}  // namespace
}  // namespace sweep
