// What the worker that claims a job after its worker was lost decides (crash_recovery.h), on a
// real sweep database: each loss is charged to the trials it hit, a trial is failed only after
// --max-attempts losses of its own, a job is given up only after --max-attempts losses that hit
// no trial, and a failed job leaves no trial `running`.
#include "sweep/queue/crash_recovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "store/store.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/sweep_lock.h"

namespace sweep::queue {
namespace {

namespace fs = std::filesystem;

class CrashRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sweep_crash_recovery_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    run_dir_ = dir_ / "lost";
    fs::create_directories(run_dir_);
    Store store(db());
    sweep_ = store.create_sweep(
        {.name = "lost", .config_yaml = "name: lost\n", .metric_name = "val_accuracy"});
    std::vector<TrialSpec> trials(5);
    for (int i = 0; i < 5; ++i) trials[i].number = i;
    store.add_trials(sweep_, trials);
    // --max-attempts 3, as submit stores it.
    job_.id = 4;
    job_.target.trial_crash_limit = 3;
    job_.max_attempts = 4;
    job_.state = JobState::running;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path db() const { return run::database_in(run_dir_); }
  TrialRow trial(int number) const {
    const Store store(db(), {.read_only = true});
    return *store.trial_by_number(sweep_, number);
  }
  void start(int number) const {
    Store store(db());
    ASSERT_TRUE(store.claim_trial(trial(number).id, "cpu:0"));
  }
  void finish(int number) const {
    Store store(db());
    store.set_trial_state(trial(number).id, TrialState::completed, {});
  }
  // The worker of the job's latest claim was lost; the next one claims it and recovers.
  RecoveryReport claim_again() {
    ++job_.attempts;
    return recover_crashed_trials(db(), "lost", job_, log_);
  }

  fs::path dir_, run_dir_;
  std::int64_t sweep_ = 0;
  JobRow job_;
  std::ostringstream log_;
};

// The hostile round's case: the worker killed once while each of trials 0-3 ran. Every trial was
// hit once, so none fails and the job goes on, to trial 4, whatever its count of claims.
TEST_F(CrashRecovery, OneLossEachForManyTrialsFailsNeitherATrialNorTheJob) {
  job_.attempts = 1;
  for (int number = 0; number <= 3; ++number) {
    start(number);
    const RecoveryReport report = claim_again();  // lost while `number` ran
    EXPECT_EQ(report.resumed, 1) << "trial " << number;
    EXPECT_EQ(report.failed, 0) << "trial " << number;
    EXPECT_EQ(report.losses_outside_trials, 0) << "trial " << number;
    EXPECT_EQ(give_up_reason(job_, report), "") << "trial " << number;
    // resume_sweep requeues it and it runs to its end.
    finish(number);
  }
  EXPECT_EQ(job_.attempts, 5) << "five claims: more than the 4 a count of claims allowed";
  EXPECT_NE(log_.str().find("trial 3 was running when the worker died (its loss 1 of 3)"),
            std::string::npos)
      << log_.str();
}

// The same trial hit three times is failed with the reason; a trial beside it in the last loss is
// charged that one loss only.
TEST_F(CrashRecovery, ATrialHitMaxAttemptsTimesIsFailedAlone) {
  job_.attempts = 1;
  start(0);
  claim_again();
  claim_again();
  start(1);
  const RecoveryReport report = claim_again();  // 0 and 1 ran
  EXPECT_EQ(report.failed, 1);
  EXPECT_EQ(report.resumed, 1);
  EXPECT_EQ(trial(0).state, TrialState::failed);
  EXPECT_EQ(trial(0).error, "killed its worker 3 times");
  EXPECT_EQ(trial(1).state, TrialState::running) << "left for resume_sweep to requeue";
  EXPECT_EQ(give_up_reason(job_, report), "");
  const Store store(db(), {.read_only = true});
  EXPECT_EQ(store.count_events(sweep_, trial(1).id, kWorkerLostEvent), 1);
  EXPECT_EQ(store.count_events(sweep_, std::nullopt, kWorkerLostEvent), 3) << "three losses";
}

// Losses with no trial running (between trials, setting the sweep up) are the job's own: it is
// given up after --max-attempts of them, not before; clean hand-backs count for nothing.
TEST_F(CrashRecovery, AJobLostOutsideItsTrialsMaxAttemptsTimesIsGivenUp) {
  job_.attempts = 1;
  start(0);
  EXPECT_EQ(give_up_reason(job_, claim_again()), "");  // lost while trial 0 ran
  finish(0);
  EXPECT_EQ(claim_again().losses_outside_trials, 1);  // lost between trials
  job_.max_attempts += 1;  // that claim was handed back cleanly: the next follows no loss
  EXPECT_EQ(claim_again().losses_outside_trials, 1);
  EXPECT_EQ(claim_again().losses_outside_trials, 2);
  const RecoveryReport third = claim_again();
  EXPECT_EQ(third.losses_outside_trials, 3);
  EXPECT_EQ(give_up_reason(job_, third),
            "gave up: its worker was lost 3 times while none of its trials was running (setting "
            "the sweep up, or between trials; the workers' logs may say why)");
}

// A job whose worker died before the sweep's database existed: every loss is outside trials.
TEST_F(CrashRecovery, NoSweepDatabaseMeansEveryLossIsTheJobs) {
  job_.attempts = 3;
  const RecoveryReport report =
      recover_crashed_trials(dir_ / "none" / "sweep.db", "none", job_, log_);
  EXPECT_EQ(report.losses_outside_trials, 2);
  EXPECT_EQ(give_up_reason(job_, report), "");
  job_.attempts = 4;
  EXPECT_NE(
      give_up_reason(job_, recover_crashed_trials(dir_ / "none" / "sweep.db", "none", job_, log_)),
      "");
}

// A failed job's trials left `running` become interrupted (kept for a resume), unless another
// process holds the sweep: its trials really run.
TEST_F(CrashRecovery, AFailedJobLeavesNoTrialRunningUnlessAnotherProcessRunsThem) {
  start(2);
  {
    const run::SweepLock held = run::SweepLock::acquire(run_dir_, "lost");
    EXPECT_EQ(interrupt_orphaned_trials(run_dir_, "lost", "job 4 failed: x", log_), 0);
    EXPECT_EQ(trial(2).state, TrialState::running);
  }
  EXPECT_EQ(interrupt_orphaned_trials(run_dir_, "lost", "job 4 failed: x", log_), 1);
  EXPECT_EQ(trial(2).state, TrialState::interrupted);
  EXPECT_EQ(trial(2).stop_reason, "job 4 failed: x");
  EXPECT_EQ(trial(3).state, TrialState::queued);
}

}  // namespace
}  // namespace sweep::queue
