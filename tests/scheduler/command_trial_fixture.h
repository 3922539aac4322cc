/*
 * command_trial_fixture.h — the command-trial tests' fixture: a temporary directory for the small
 * scripts each test writes, one trial run through an Executor with a recording sink, and a
 * file's bytes (a trial's log file).
 */
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>

#include "test_helpers.h"

namespace sweep::scheduler::testing {

namespace fs = std::filesystem;

// A file's bytes (a trial's log file).
inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class CommandTrialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sweep-cmd-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes an executable script and returns its path.
  std::string script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << body;
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }

  TrialOutcome run_one(const CommandSpec& command, TrialSpec spec = spec_with_id(1),
                       Device device = Device::cpu()) {
    ExecutorOptions options;
    options.devices = {device};
    Executor executor(options, {sink_});
    return executor.submit(std::move(spec), make_command_trial(command)).outcome();
  }

  // A trial submitted on `executor` (kept by the caller, so that the test can stop it) and the
  // gate its first metric opens: once open, the program is running and reporting.
  std::pair<TrialFuture, std::shared_ptr<Gate>> submit_watched(Executor& executor,
                                                               const CommandSpec& command,
                                                               TrialSpec spec) {
    auto got_metric = std::make_shared<Gate>();
    TrialCallbacks callbacks;
    callbacks.on_metric = [got_metric](const MetricPoint&) { got_metric->open(); };
    return {executor.submit(std::move(spec), make_command_trial(command), callbacks), got_metric};
  }

  fs::path dir_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
};

}  // namespace sweep::scheduler::testing

namespace sweep::scheduler {
using testing::CommandTrialTest;
using testing::read_file;
}  // namespace sweep::scheduler
