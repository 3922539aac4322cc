// The queue library's small pure parts: the job line carried in the config text, the worker's
// --devices, the file layout.
#include <gtest/gtest.h>

#include "sweep/queue/queue_paths.h"
#include "sweep/queue/submitted_job.h"
#include "sweep/queue/worker.h"

namespace sweep::queue {
namespace {

TEST(SubmittedJobLine, RoundTripsAndKeepsTheConfigLinesWhereTheyWere) {
  SubmittedJob job;
  job.working_dir = "/home/a b/\"quoted\"\nproject";
  job.name = "lenet";
  job.output_dir = "runs";
  job.overrides = {"training.epochs=2"};
  job.trial_crash_limit = 5;
  const std::string config = "name: lenet\ntraining: {epochs: 5}";
  const std::string text = attach_job_line(config, job);
  EXPECT_EQ(text.rfind(config + "\n", 0), 0u);  // line numbers of the config are unchanged
  const auto back = read_job_line(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->working_dir, job.working_dir);
  EXPECT_EQ(back->overrides, job.overrides);
  EXPECT_EQ(back->trial_crash_limit, 5);
  EXPECT_EQ(back->sweep_db(),
            std::filesystem::path(job.working_dir) / "runs" / "lenet" / "sweep.db");
  EXPECT_FALSE(read_job_line(config));
  job.output_dir = "/abs/out";
  EXPECT_EQ(read_job_line(attach_job_line(config, job))->sweep_db(),
            std::filesystem::path("/abs/out/lenet/sweep.db"));
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
