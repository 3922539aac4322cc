// The queue library's small pure parts: where a job's sweep lies, the worker's --devices and
// the bounds of its numbers, the file layout, a job's attempts as `sweep status` says them, the
// lines that open and close an attempt in a job's log.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <limits>

#include "sweep/queue/job_attempts.h"
#include "sweep/queue/job_log.h"
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

// run_worker (the C++ API, as `sweep worker`) refuses numbers out of worker.h's bounds before it
// touches the queue; each message names the flag and the value. Before, a NaN lease ran.
TEST(WorkerBounds, RunWorkerRefusesNumbersOutOfBoundsBeforeTouchingTheQueue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("sweep_worker_bounds_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  WorkerOptions good;
  good.queue_db = dir / "queue.db";
  good.idle_exit_s = 0.1;  // a run_worker that took a bad lease or heartbeat would exit soon
  good.poll_s = 0.05;
  EXPECT_EQ(worker_options_problem(good), "");
  struct Case {
    std::function<void(WorkerOptions&)> set;
    std::string says;
  };
  const std::vector<Case> cases = {
      {[&](WorkerOptions& o) { o.timing.lease_s = nan; }, "--lease nan: expected seconds above 0"},
      {[&](WorkerOptions& o) { o.timing.lease_s = inf; }, "--lease inf: expected"},
      {[&](WorkerOptions& o) { o.timing.lease_s = 0; }, "--lease 0: expected"},
      {[&](WorkerOptions& o) { o.timing.interval_s = 1e-9; }, "--heartbeat 1e-09: expected"},
      {[&](WorkerOptions& o) { o.timing.interval_s = nan; }, "--heartbeat nan: expected"},
      {[&](WorkerOptions& o) { o.timing.interval_s = o.timing.lease_s; },
       "--heartbeat 10: expected a heartbeat shorter than --lease 10"},
      {[&](WorkerOptions& o) { o.idle_exit_s = -1; }, "--idle-exit -1: expected seconds from 0"},
      {[&](WorkerOptions& o) { o.idle_exit_s = nan; }, "--idle-exit nan: expected"},
      {[&](WorkerOptions& o) { o.poll_s = 0; }, "--poll 0: expected seconds from 0.01"},
      {[&](WorkerOptions& o) { o.poll_s = nan; }, "--poll nan: expected"},
      {[&](WorkerOptions& o) { o.cpu_slots = -1; }, "--cpu-slots -1: expected"},
      {[&](WorkerOptions& o) { o.cpu_slots = kMaxCpuSlots + 1; }, "--cpu-slots 1025: expected"},
  };
  for (const Case& c : cases) {
    WorkerOptions options = good;
    c.set(options);
    EXPECT_EQ(worker_options_problem(options).rfind(c.says, 0), 0u)
        << c.says << "\nis not the start of: " << worker_options_problem(options);
    // Not run with a bad idle time or poll: a run_worker that took one would never return.
    if (options.idle_exit_s != good.idle_exit_s || options.poll_s != good.poll_s) continue;
    try {
      run_worker(options);
      ADD_FAILURE() << "run_worker took: " << c.says;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), worker_options_problem(options));
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "queue.db")) << "the queue was not even opened";
  // The bounds themselves are in bounds; 0 CPU slots is "each job's own".
  WorkerOptions edges = good;
  edges.timing = {.lease_s = kMaxWorkerSeconds, .interval_s = kMinHeartbeatS};
  edges.idle_exit_s = 0;
  edges.poll_s = kMinPollS;
  edges.cpu_slots = kMaxCpuSlots;
  EXPECT_EQ(worker_options_problem(edges), "");
  edges.cpu_slots = 0;
  EXPECT_EQ(worker_options_problem(edges), "");
  std::filesystem::remove_all(dir);
}

// The lines that open and close an attempt in a job's log, as the runner writes them and as
// `sweep logs -f` reads them.
TEST(JobLog, OpeningAndClosingLinesAreToldApartFromEverythingElse) {
  JobRow job;
  job.id = 3;
  job.attempts = 1;
  job.max_attempts = 4;
  job.state = JobState::running;
  const std::string opening = attempt_opening(job, "vm:42:abc", "2024-05-01 10:00:00");
  EXPECT_EQ(opening, "== 2024-05-01 10:00:00: job 3, attempt 1, on worker vm:42:abc");
  EXPECT_EQ(attempt_mark(opening, 3), AttemptMark::opens);
  EXPECT_EQ(attempt_owner(opening), "vm:42:abc");
  job.attempts = 2;  // a lost worker's words in the attempt text do not confuse the owner
  EXPECT_EQ(attempt_owner(attempt_opening(job, "h:1:f", "T")), "h:1:f");
  for (const std::string& closing :
       {attempt_closing(3, " cancelled: running trials kept their checkpoints"),
        attempt_closing(3, ": this worker lost it; another worker continues it"),
        attempt_closing(3, " handed back to the queue: the worker is shutting down"),
        attempt_closing(3, " done", "2024-05-01 10:00:09"),
        attempt_closing(3, " failed", "2024-05-01 10:00:09")})
    EXPECT_EQ(attempt_mark(closing, 3), AttemptMark::closes) << closing;
  EXPECT_EQ(attempt_closing(3, " done", "T"), "== T: job 3 done");
  EXPECT_EQ(attempt_mark("== job 31 cancelled: running trials kept their checkpoints", 3),
            AttemptMark::none);
  EXPECT_EQ(attempt_mark("== 2024-05-01 10:00:00: job 31, attempt 1, on worker w", 3),
            AttemptMark::none);
  EXPECT_EQ(attempt_mark("job 3: stopping: the job was cancelled", 3), AttemptMark::none);
  EXPECT_EQ(attempt_mark("trial 0 interrupted", 3), AttemptMark::none);
  EXPECT_EQ(attempt_mark("", 3), AttemptMark::none);
}

TEST(JobLog, ATailFollowsTheLatestAttemptThroughLinesWrittenInPieces) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sweep_job_log_tail_" + std::to_string(::getpid()) + ".log");
  std::filesystem::remove(path);
  JobLogTail tail(path, 5);
  EXPECT_EQ(tail.read_new(), "") << "no file yet";
  EXPECT_FALSE(tail.attempt_open());
  std::ofstream log(path, std::ios::app);
  log.setf(std::ios::unitbuf);
  JobRow job;
  job.id = 5;
  job.attempts = 1;
  job.max_attempts = 4;
  const std::string opening = attempt_opening(job, "h:7:aa", "T");
  log << opening.substr(0, 10);  // a line cut by the reader: not an attempt yet
  EXPECT_EQ(tail.read_new(), opening.substr(0, 10));
  EXPECT_FALSE(tail.attempt_open());
  log << opening.substr(10) << "\ntrial 0 completed\n";
  EXPECT_EQ(tail.read_new(), opening.substr(10) + "\ntrial 0 completed\n");
  EXPECT_TRUE(tail.attempt_open());
  EXPECT_EQ(tail.open_attempt_owner(), "h:7:aa");
  log << attempt_closing(5, " cancelled: running trials kept their checkpoints");
  tail.read_new();
  EXPECT_TRUE(tail.attempt_open()) << "the closing line has no newline yet";
  log << "\n";
  EXPECT_EQ(tail.read_new(), "\n");
  EXPECT_FALSE(tail.attempt_open());
  EXPECT_EQ(tail.open_attempt_owner(), "");
  EXPECT_EQ(tail.read_new(), "");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace sweep::queue
