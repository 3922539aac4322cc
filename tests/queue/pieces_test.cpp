// The queue library's small pure parts: where a job's sweep lies, the worker's --devices, the
// file layout.
#include <gtest/gtest.h>

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
  apply_worker_devices(r, "all", 0);
  EXPECT_TRUE(r.all_gpus);
  EXPECT_THROW(apply_worker_devices(r, "0,x", 0), Error);
  EXPECT_THROW(apply_worker_devices(r, "cpu", -1), Error);
}

TEST(QueuePathsLayout, SideFilesLiveBesideTheDatabaseUnderItsStem) {
  const QueuePaths paths("/tmp/q/jobs.db");
  EXPECT_EQ(paths.job_log(7), "/tmp/q/logs/jobs-job-7.log");
  EXPECT_EQ(paths.worker_lock("ab"), "/tmp/q/workers/jobs-ab.lock");
  EXPECT_EQ(paths.worker_log("ab"), "/tmp/q/workers/jobs-ab.log");
}

}  // namespace
}  // namespace sweep::queue
