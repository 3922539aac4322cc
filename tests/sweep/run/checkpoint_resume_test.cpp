// A trial resumed from a checkpoint that is not its own (another trial's, copied into its
// directory) or cannot be read (cut short) fails with the reason, and never takes another trial's
// results. Retrying it (`sweep resume --retry-failed`) sets the file aside, kept under a new name,
// and trains the trial from the start, saying so in the trial's log and on the console; a retried
// trial whose checkpoint is good continues from it.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config_test_util.h"
#include "store/store.h"
#include "sweep/run/run_sweep.h"
#include "sweep/run/sweep_layout.h"
#include "sweep_process_util.h"
#include "trainer/checkpoint.h"

namespace sweep {
namespace {

namespace fs = std::filesystem;
using config::testing::load_text;
using sweep::testing::fresh_dir;
using sweep::testing::slurp;

// Two trials of two epochs, a checkpoint after each epoch, one trial at a time.
const char* kTwoTrials =
    "name: ck\n"
    "data: {dataset: synthetic, synthetic: {train_size: 128, test_size: 32, height: 8, width: 8}}\n"
    "model: {preset: mlp, hidden: [8]}\n"
    "training: {epochs: 2, batch_size: 16, checkpoint: {every_epochs: 1}}\n"
    "sweep:\n  parameters:\n"
    "    training.learning_rate: {values: [0.01, 0.1]}\n"
    "resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}\n";

class CheckpointResume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("sweep_checkpoint_resume");
    options_.out = &console_;
    options_.live = false;
    options_.handle_sigint = false;
    options_.write_report = false;
    const run::RunResult result =
        run::run_sweep(load_text(kTwoTrials, {"output.dir=" + dir_.string()}), options_);
    ASSERT_EQ(result.exit_code(), 0) << console_.str();
    db_ = result.db_path;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path checkpoint(int number) const {
    return run::checkpoint_in(run::trial_dir_in(db_.parent_path(), number));
  }
  TrialRow trial(int number) const {
    const Store store(db_, {.read_only = true});
    return *store.trial_by_number(store.find_sweep("ck")->id, number);
  }
  // The completed trial set back, as a run that ended it so would have left it (the store keeps
  // a finished trial finished, so the row is written directly): `interrupted` to be continued
  // from its checkpoint by a resume, `failed` to be retried.
  void mark(int number, TrialState state) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    const std::string sql = "UPDATE trials SET state = '" + std::string(to_string(state)) +
                            "' WHERE number = " + std::to_string(number);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  run::RunResult resume(bool retry_failed) {
    console_.str("");
    run::ResumeOptions resume;
    resume.run = options_;
    resume.out_dir = dir_.string();
    resume.retry_failed = retry_failed;
    return run::resume_sweep("ck", resume);
  }

  fs::path dir_, db_;
  std::ostringstream console_;
  run::RunOptions options_;
};

TEST_F(CheckpointResume, AnotherTrialsCheckpointIsRefusedThenSetAsideOnRetry) {
  const std::string theirs = slurp(checkpoint(1));
  fs::copy_file(checkpoint(1), checkpoint(0), fs::copy_options::overwrite_existing);
  mark(0, TrialState::interrupted);

  resume(false);
  TrialRow zero = trial(0);
  EXPECT_EQ(zero.state, TrialState::failed) << "took trial 1's checkpoint: " << zero.summary.dump();
  EXPECT_NE(zero.error.find("belongs to trial 1 of sweep 'ck', not to trial 0 of sweep 'ck'"),
            std::string::npos)
      << zero.error;
  EXPECT_NE(zero.error.find("--retry-failed sets it aside"), std::string::npos) << zero.error;
  EXPECT_EQ(slurp(checkpoint(0)), theirs) << "a refused checkpoint is left where it is";

  const run::RunResult retried = resume(true);
  EXPECT_EQ(retried.exit_code(), 0) << console_.str();
  zero = trial(0);
  EXPECT_EQ(zero.state, TrialState::completed) << zero.error;
  const fs::path kept = checkpoint(0).string() + ".foreign-1";
  ASSERT_TRUE(fs::exists(kept));
  EXPECT_EQ(slurp(kept), theirs) << "set aside as it was";
  EXPECT_NE(console_.str().find("trial 0: " + checkpoint(0).string()), std::string::npos)
      << console_.str();
  EXPECT_NE(console_.str().find("set aside as " + kept.string()), std::string::npos)
      << console_.str();
  const std::string log = slurp(run::log_in(run::trial_dir_in(db_.parent_path(), 0)));
  EXPECT_NE(log.find("set aside as " + kept.string() + ", the trial trains from the start"),
            std::string::npos)
      << log;
  // Trained again from its start: its new checkpoint is its own, both epochs done.
  const trainer::CheckpointData own = trainer::read_checkpoint(checkpoint(0).string());
  ASSERT_TRUE(own.identity.has_value());
  EXPECT_EQ(own.identity->sweep, "ck");
  EXPECT_EQ(own.identity->trial, 0);
  EXPECT_EQ(own.loop.epochs_completed, 2);
  EXPECT_EQ(zero.summary.value("epochs_completed", 0), 2);
}

TEST_F(CheckpointResume, ACutShortCheckpointFailsOnceThenIsSetAsideOnEveryRetry) {
  const std::string whole = slurp(checkpoint(1));
  std::ofstream(checkpoint(1), std::ios::binary | std::ios::trunc)
      << whole.substr(0, whole.size() / 2);
  mark(1, TrialState::interrupted);

  resume(false);
  EXPECT_EQ(trial(1).state, TrialState::failed);
  EXPECT_NE(trial(1).error.find("checkpoint is truncated"), std::string::npos) << trial(1).error;

  EXPECT_EQ(resume(true).exit_code(), 0) << console_.str();
  EXPECT_EQ(trial(1).state, TrialState::completed) << trial(1).error;
  const fs::path kept = checkpoint(1).string() + ".unreadable-1";
  EXPECT_EQ(slurp(kept).size(), whole.size() / 2);
  EXPECT_NE(console_.str().find("checkpoint is truncated"), std::string::npos) << console_.str();
  EXPECT_NE(console_.str().find("set aside as " + kept.string()), std::string::npos)
      << console_.str();

  // Cut short again: the next retry keeps the first file and sets this one aside beside it.
  std::ofstream(checkpoint(1), std::ios::binary | std::ios::trunc) << "SWEEPCKP";
  mark(1, TrialState::failed);
  EXPECT_EQ(resume(true).exit_code(), 0) << console_.str();
  EXPECT_EQ(trial(1).state, TrialState::completed) << trial(1).error;
  EXPECT_EQ(slurp(kept).size(), whole.size() / 2);
  EXPECT_EQ(slurp(checkpoint(1).string() + ".unreadable-2"), "SWEEPCKP");
}

TEST_F(CheckpointResume, ARetriedTrialContinuesFromAGoodCheckpoint) {
  mark(0, TrialState::failed);
  EXPECT_EQ(resume(true).exit_code(), 0) << console_.str();
  EXPECT_EQ(trial(0).state, TrialState::completed) << trial(0).error;
  for (const auto& entry : fs::directory_iterator(checkpoint(0).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find("checkpoint.bin."), std::string::npos)
        << "set aside a good checkpoint: " << entry.path();
  EXPECT_EQ(console_.str().find("set aside"), std::string::npos) << console_.str();
  const std::string log = slurp(run::log_in(run::trial_dir_in(db_.parent_path(), 0)));
  EXPECT_NE(log.find("resuming from"), std::string::npos) << log;
}

}  // namespace
}  // namespace sweep
