// The queue library's small pure parts: where a job's sweep lies, the worker's --devices, the
// file layout, a job's attempts as `sweep status` says them.
#include <gtest/gtest.h>

#include "sweep/queue/job_attempts.h"
#include "sweep/queue/job_target.h"
#include "sweep/queue/queue_paths.h"
#include "sweep/queue/worker.h"

namespace sweep::queue {
namespace {

TEST(JobTarget, TheSweepLiesUnderTheSubmitDirectoryUnlessTheOutputIsAbsolute) {
  JobTarget target;
  target.working_dir = "/home/a b/\"quoted\"\nproject";
  target.sweep_name = "lenet";
  target.output_dir = "runs";
  EXPECT_EQ(sweep_db(target),
            std::filesystem::path(target.working_dir) / "runs" / "lenet" / "sweep.db");
  target.output_dir = "/abs/out";
  EXPECT_EQ(sweep_db(target), std::filesystem::path("/abs/out/lenet/sweep.db"));
  JobRow row;
  EXPECT_FALSE(target_of(row)) << "a job enqueued by other code has no target";
  row.target = target;
  EXPECT_EQ(target_of(row), target);
}

TEST(WorkerDevices, ParsesCpuAllAndIndices) {
  config::ResourcesSpec r;
  apply_worker_devices(r, "", 0);
  EXPECT_EQ(r.execution, "auto");
  apply_worker_devices(r, "cpu", 3);
  EXPECT_EQ(r.execution, "cpu");
  EXPECT_EQ(r.cpu_slots, 3);
  apply_worker_devices(r, "0,2", 0);
  EXPECT_EQ(r.execution, "gpu");
  EXPECT_FALSE(r.all_gpus);
  EXPECT_EQ(r.gpus, (std::vector<int>{0, 2}));
  apply_worker_devices(r, "cuda:1", 0);
  EXPECT_EQ(r.gpus, (std::vector<int>{1}));
  apply_worker_devices(r, "all", 0);  // every GPU, else the CPU slots
  EXPECT_EQ(r.execution, "auto");
  EXPECT_TRUE(r.all_gpus);
  EXPECT_TRUE(r.gpus.empty());
  apply_worker_devices(r, "gpu", 0);  // GPUs or an error
  EXPECT_EQ(r.execution, "gpu");
  EXPECT_TRUE(r.all_gpus);
  EXPECT_THROW(apply_worker_devices(r, "0,x", 0), Error);
  EXPECT_THROW(apply_worker_devices(r, "1,cuda:1", 0), Error);  // one GPU named twice
  EXPECT_THROW(apply_worker_devices(r, "cpu", -1), Error);
}

// --max-attempts 3 (the default) is stored as a budget of 4 claims: the first run must not read
// "attempt 1 of 4", and a clean hand-back (budget + 1, claims + 1) spends no attempt.
TEST(JobAttempts, AreSaidInTheUnitsOfMaxAttempts) {
  JobRow job;
  job.target.trial_crash_limit = 3;
  job.max_attempts = 4;
  job.attempts = 1;
  job.state = JobState::running;
  EXPECT_EQ(trial_attempt_limit(job), 3);
  EXPECT_EQ(attempt_text(job), "attempt 1");
  job.attempts = 2;
  job.max_attempts = 5;  // handed back cleanly once, then claimed again
  EXPECT_EQ(attempt_text(job), "attempt 1");
  job.attempts = 3;  // then its worker died and another claimed it
  EXPECT_EQ(attempt_text(job),
            "attempt 2 (1 worker lost; a trial that kills its worker 3 times "
            "is failed)");
  job.state = JobState::queued;  // lost again, waiting for a worker
  EXPECT_EQ(attempt_text(job),
            "attempt 2 (2 workers lost; a trial that kills its worker 3 times "
            "is failed)");
  job.state = JobState::done;
  EXPECT_EQ(attempt_text(job), "attempt 2");
  JobRow unrecorded;  // enqueued by other code: the limit is the budget less the final claim
  unrecorded.max_attempts = 6;
  EXPECT_EQ(trial_attempt_limit(unrecorded), 5);
}

TEST(QueuePathsLayout, SideFilesLiveBesideTheDatabaseUnderItsStem) {
  const QueuePaths paths("/tmp/q/jobs.db");
  EXPECT_EQ(paths.job_log(7), "/tmp/q/logs/jobs-job-7.log");
  EXPECT_EQ(paths.worker_lock("ab"), "/tmp/q/workers/jobs-ab.lock");
  EXPECT_EQ(paths.worker_log("ab"), "/tmp/q/workers/jobs-ab.log");
}

}  // namespace
}  // namespace sweep::queue
