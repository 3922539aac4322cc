/*
 * start_ahead_test.cpp — StartAhead decodes the data the sweep's first trial will load (its own
 * seed where a holdout depends on it), nothing for an external trainer, and swallows a load that
 * fails (the trial reports it).
 */
#include "sweep/run/start_ahead.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config_test_util.h"
#include "quiet_run.h"
#include "sweep/run/run_sweep.h"
#include "trainer/data/load_data.h"

namespace sweep::run {
namespace {

using config::testing::load_text;

// A synthetic set of a size no other test uses, so the process's data cache starts without it.
constexpr const char* kData =
    "data: {dataset: synthetic, synthetic: {train_size: %d, test_size: 16}, %s}\n"
    "model: {preset: mlp, hidden: [8]}\n"
    "training: {epochs: 1, batch_size: 8, seed: 5}\n";

std::string config_text(int train_size, const std::string& extra, const std::string& rest) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, kData, train_size, extra.c_str());
  return buffer + rest;
}

TEST(StartAhead, DecodesTheFirstTrialsDataBeforeAnyTrialAsks) {
  const config::SweepConfig c = load_text(config_text(
      328, "validation: test",
      "sweep: {method: grid, parameters: {training.learning_rate: {values: [0.1, 0.2]}}}\n"));
  const config::TrialPlan first = config::resolve_trial(c, 0);
  ASSERT_EQ(trainer::load_data_cached(first.config.data, first.config.training.seed), nullptr);
  {
    StartAhead ahead;
    ahead.data(c);
  }  // waits for the decode
  const auto kept = trainer::load_data_cached(first.config.data, first.config.training.seed);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->train.size(), 328);
  EXPECT_EQ(kept, trainer::load_data_shared(first.config.data, first.config.training.seed));
}

TEST(StartAhead, ASweptSeedDrawsTheFirstTrialsHoldout) {
  // With a holdout the data depend on the seed: trial 0's (7), not the file's (5).
  const config::SweepConfig c = load_text(
      config_text(336, "validation: holdout, holdout_fraction: 0.25",
                  "sweep: {method: grid, parameters: {training.seed: {values: [7, 8]}}}\n"));
  const config::TrialPlan first = config::resolve_trial(c, 0);
  ASSERT_EQ(first.config.training.seed, 7u);
  {
    StartAhead ahead;
    ahead.data(c);
  }
  EXPECT_NE(trainer::load_data_cached(first.config.data, 7), nullptr);
  EXPECT_EQ(trainer::load_data_cached(first.config.data, 5), nullptr);
}

TEST(StartAhead, AnExternalTrainersSweepDecodesNothing) {
  const config::SweepConfig c = load_text(config_text(
      344, "validation: test",
      "trainer: {command: 'true'}\n"
      "sweep: {method: grid, parameters: {training.learning_rate: {values: [0.1]}}}\n"));
  {
    StartAhead ahead;
    ahead.data(c);
  }
  EXPECT_EQ(trainer::load_data_cached(c.base.data, c.base.training.seed), nullptr);
}

TEST(StartAhead, AFailedLoadIsLeftForTheTrialToReport) {
  // Fashion-MNIST's file names over bytes that are not IDX files: the config finds them, the
  // decode fails.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "sweep-start-ahead-not-idx";
  std::filesystem::create_directories(dir);
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
    std::ofstream(dir / name) << "not an IDX file";
  const config::SweepConfig c = load_text(
      "data: {dataset: fashion-mnist, path: " + dir.string() + "}\nmodel: {preset: lenet}\n" +
      "sweep: {method: grid, parameters: {training.learning_rate: {values: [0.1]}}}\n");
  {
    StartAhead ahead;
    ahead.data(c);  // neither throws nor leaves a thread behind
  }
  EXPECT_EQ(trainer::load_data_cached(c.base.data, c.base.training.seed), nullptr);
  EXPECT_THROW(trainer::load_data_shared(c.base.data, c.base.training.seed), Error);
}

// A run refused because its database already holds the sweep stops at once: it decodes nothing
// (its StartAhead would have made the refusal wait for the decode).
TEST(StartAhead, ARunRefusedForAnExistingSweepDecodesNothing) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "sweep-start-ahead-run";
  std::filesystem::remove_all(dir);
  const std::string sweep = "name: twice\noutput: {dir: " + dir.string() + "}\n" +
                            "sweep: {method: grid, parameters: {training.learning_rate: "
                            "{values: [0.1]}}}\n";
  std::ostringstream quiet;
  const RunOptions options = sweep::testing::quiet_run_options(quiet, false);
  run_sweep(load_text(config_text(352, "validation: test", sweep)), options);
  // The same sweep name, other data: refused, and that data was never decoded.
  const config::SweepConfig again = load_text(config_text(360, "validation: test", sweep));
  EXPECT_THROW(run_sweep(again, options), Error);
  EXPECT_EQ(trainer::load_data_cached(again.base.data, again.base.training.seed), nullptr);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sweep::run
