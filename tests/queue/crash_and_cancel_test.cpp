// The queue's promises under failure: a worker killed with SIGKILL mid-trial (its job is
// reclaimed and continued, completed trials are not rerun, the interrupted one resumes from its
// checkpoint, no metric point is lost or doubled), a trial that keeps killing its worker, workers
// killed once in each of several trials (attempts count per trial), a failed job leaving no trial
// running, cancel while queued and while running, `sweep logs -f` through a cancel and a killed
// worker, and a queue file that is not a queue.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <fstream>
#include <map>
#include <set>

#include "queue_test_util.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/queue_paths.h"

namespace sweep::queue::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFastLease = {"--lease", "1.5",    "--heartbeat",
                                             "0.25",    "--poll", "0.1"};

std::vector<std::string> worker_args(std::vector<std::string> extra) {
  std::vector<std::string> args = kFastLease;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// The sweep stores paths relative to its own directory (OUT/NAME), so it can be moved.
fs::path in_dir(const fs::path& run_dir, const std::string& path) {
  return fs::path(path).is_absolute() ? fs::path(path) : run_dir / path;
}

// run_sweep's layout: OUT/NAME/trials/NNN/checkpoint.bin (the row's checkpoint_path may be set
// only once the trial ends).
fs::path checkpoint_of(const fs::path& db, std::int64_t number) {
  char dir[16];
  std::snprintf(dir, sizeof dir, "%03lld", static_cast<long long>(number));
  return db.parent_path() / "trials" / dir / "checkpoint.bin";
}

std::optional<Store> open_if_there(const fs::path& db) {
  if (!fs::exists(db)) return std::nullopt;
  try {
    return Store(db, {.read_only = true});
  } catch (const Error&) {
    return std::nullopt;
  }
}

// What a test that timed out waiting saw: the job's log and the trials' rows.
std::string diagnose(const QueueDir& dir, const fs::path& db, const std::string& name) {
  std::string text = dir.sweep({"logs", "1"}).out + dir.sweep({"status", "1"}).out;
  if (auto store = open_if_there(db); store && store->find_sweep(name))
    for (const TrialRow& t : store->trials(store->find_sweep(name)->id))
      text += "trial " + std::to_string(t.number) + " " + std::string(to_string(t.state)) +
              " checkpoint '" + t.checkpoint_path + "'\n";
  return text;
}

// Polls the sweep database until trial 0 completed and another trial runs with a checkpoint
// written (at least one epoch done): the moment to kill its worker.
bool wait_for_running_checkpoint(const fs::path& db, const std::string& name,
                                 std::int64_t& running_number) {
  return eventually(
      [&] {
        auto store = open_if_there(db);
        if (!store) return false;
        const auto sweep = store->find_sweep(name);
        if (!sweep) return false;
        bool first_done = false;
        for (const TrialRow& t : store->trials(sweep->id)) {
          if (t.number == 0) first_done = t.state == TrialState::completed;
          if (first_done && t.state == TrialState::running &&
              fs::exists(checkpoint_of(db, t.number))) {
            running_number = t.number;
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(60));
}

TEST(QueueCrash, AKilledWorkersJobIsReclaimedAndContinuesFromCheckpoints) {
  QueueDir dir;
  // 3 trials of 4 epochs; each epoch long enough that the kill lands inside a trial.
  dir.write("crash.yaml", tiny_config("crash", 3, 4, 16384, 256));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "crash.yaml", "--no-worker"}));
  const fs::path db = dir.path() / "runs" / "crash" / "sweep.db";

  const pid_t first = dir.start_worker(worker_args({}));
  std::int64_t victim = -1;
  ASSERT_TRUE(wait_for_running_checkpoint(db, "crash", victim)) << diagnose(dir, db, "crash");
  dir.kill_hard(first);

  std::map<std::int64_t, TrialRow> before;
  {
    Store store(db, {.read_only = true});
    for (const TrialRow& t : store.trials(store.find_sweep("crash")->id)) before[t.number] = t;
  }
  ASSERT_EQ(before.at(victim).state, TrialState::running);  // the dead worker left it so

  // Nobody would ever continue the job: `wait` says so instead of waiting in silence.
  const CommandResult stuck = dir.sweep({"wait", std::to_string(id), "--timeout", "1"});
  EXPECT_EQ(stuck.exit_code, 124) << stuck.out << stuck.err;
  EXPECT_NE(stuck.err.find("no worker is alive"), std::string::npos) << stuck.err;
  EXPECT_NE(stuck.err.find("sweep worker --detach"), std::string::npos) << stuck.err;

  const pid_t second = dir.start_worker(worker_args({"--idle-exit", "0.5"}));
  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "90"});
  EXPECT_EQ(wait.exit_code, 0) << wait.out << wait.err;
  EXPECT_EQ(dir.wait_exit(second, std::chrono::seconds(30)), 0);

  Queue queue(dir.queue_db(), {.read_only = true});
  const JobRow job = queue.job(id).row();
  EXPECT_EQ(job.state, JobState::done) << job.error;
  EXPECT_EQ(job.attempts, 2);

  Store store(db, {.read_only = true});
  const auto sweep = store.find_sweep("crash");
  for (const TrialRow& t : store.trials(sweep->id)) {
    EXPECT_EQ(t.state, TrialState::completed) << "trial " << t.number << ": " << t.error;
    EXPECT_EQ(t.summary.value("epochs_completed", 0), 4) << "trial " << t.number;
    const TrialRow& old = before.at(t.number);
    if (old.state == TrialState::completed) {  // never rerun
      EXPECT_EQ(t.attempts, 1) << "trial " << t.number;
      EXPECT_EQ(t.started_at, old.started_at) << "trial " << t.number;
      EXPECT_EQ(t.finished_at, old.finished_at) << "trial " << t.number;
    }
    // One validation point per epoch, each exactly once; train_loss steps strictly increase.
    std::map<std::string, std::vector<std::int64_t>> steps;
    for (const MetricPoint& p : store.trial_metrics(t.id)) steps[p.name].push_back(p.step);
    EXPECT_EQ(steps["val_accuracy"].size(), 4u) << "trial " << t.number;
    for (const auto& [name, list] : steps)
      EXPECT_EQ(std::set<std::int64_t>(list.begin(), list.end()).size(), list.size()) << name;
  }
  const TrialRow resumed = *store.trial_by_number(sweep->id, victim);
  EXPECT_EQ(resumed.attempts, 2);
  std::ifstream trial_log(in_dir(db.parent_path(), resumed.log_path));
  const std::string trial_text((std::istreambuf_iterator<char>(trial_log)),
                               std::istreambuf_iterator<char>());
  EXPECT_NE(trial_text.find("resuming from"), std::string::npos) << trial_text;

  const CommandResult logs = dir.sweep({"logs", std::to_string(id)});
  EXPECT_NE(logs.out.find("attempt 2"), std::string::npos) << logs.out;
  EXPECT_NE(logs.out.find("continues from"), std::string::npos) << logs.out;
}

// SIGTERM (a clean stop, not a crash): the worker checkpoints its running trial, hands the job
// back at once (not when its 60 s lease would run out) and the hand-back spends no attempt; the
// next worker continues the sweep to done.
TEST(QueueStop, ASigtermedWorkerHandsItsJobBackAtOnceWithoutSpendingAnAttempt) {
  QueueDir dir;
  dir.write("stop.yaml", tiny_config("stop", 3, 4, 16384, 256));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "stop.yaml", "--no-worker"}));
  const fs::path db = dir.path() / "runs" / "stop" / "sweep.db";

  const pid_t first = dir.start_worker({"--lease", "60", "--heartbeat", "0.25", "--poll", "0.1"});
  std::int64_t running = -1;
  ASSERT_TRUE(wait_for_running_checkpoint(db, "stop", running)) << diagnose(dir, db, "stop");
  ASSERT_EQ(::kill(first, SIGTERM), 0);
  EXPECT_EQ(dir.wait_exit(first, std::chrono::seconds(30)), 0) << "a clean stop exits 0";
  {
    Queue queue(dir.queue_db(), {.read_only = true});
    const JobRow job = queue.job(id).row();
    EXPECT_EQ(job.state, JobState::queued) << "handed back at once, not at lease expiry";
    EXPECT_EQ(job.lease_owner, "");
    EXPECT_EQ(job.attempts, 1);
    EXPECT_EQ(job.max_attempts, 5) << "3 attempts (+1 stored) and the clean stop's refund";
  }

  const pid_t second = dir.start_worker(worker_args({"--idle-exit", "0.5"}));
  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "90"});
  EXPECT_EQ(wait.exit_code, 0) << wait.out << wait.err;
  EXPECT_EQ(dir.wait_exit(second, std::chrono::seconds(30)), 0);
  Queue queue(dir.queue_db(), {.read_only = true});
  EXPECT_EQ(queue.job(id).row().state, JobState::done) << queue.job(id).row().error;
  Store store(db, {.read_only = true});
  for (const TrialRow& t : store.trials(store.find_sweep("stop")->id))
    EXPECT_EQ(t.state, TrialState::completed) << "trial " << t.number << ": " << t.error;
  const CommandResult logs = dir.sweep({"logs", std::to_string(id)});
  EXPECT_NE(logs.out.find("handed back to the queue"), std::string::npos) << logs.out;
  // The trial the stop interrupted completed later: status shows its latest state only.
  const CommandResult status = dir.sweep({"status", std::to_string(id)});
  EXPECT_EQ(status.out.find("stopped by its worker"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("interrupted"), std::string::npos) << status.out;
}

TEST(QueueCrash, ATrialThatKeepsKillingItsWorkerIsFailedAndTheRestRuns) {
  QueueDir dir;
  dir.write("loop.yaml", tiny_config("loop", 2, 3, 16384, 256));
  const std::int64_t id =
      job_id_of(dir.sweep({"submit", "loop.yaml", "--no-worker", "--max-attempts", "1"}));
  const fs::path db = dir.path() / "runs" / "loop" / "sweep.db";

  const pid_t first = dir.start_worker(worker_args({}));
  std::int64_t victim = -1;
  ASSERT_TRUE(wait_for_running_checkpoint(db, "loop", victim)) << diagnose(dir, db, "loop");
  dir.kill_hard(first);
  dir.start_worker(worker_args({"--idle-exit", "0.5"}));

  // A failed trial makes the job fail, as it makes `sweep run` exit 1.
  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "90"});
  EXPECT_EQ(wait.exit_code, 1) << wait.out << wait.err;
  Store store(db, {.read_only = true});
  const TrialRow trial = *store.trial_by_number(store.find_sweep("loop")->id, victim);
  EXPECT_EQ(trial.state, TrialState::failed);
  EXPECT_EQ(trial.error, "killed its worker 1 times");
  const CommandResult status = dir.sweep({"status", std::to_string(id)});
  EXPECT_NE(status.out.find("killed its worker"), std::string::npos) << status.out;
}

// Polls the sweep database until trial `number` runs with a checkpoint written (at least one
// epoch done): the moment to kill its worker.
bool wait_for_checkpointed_trial(const fs::path& db, const std::string& name, std::int64_t number) {
  return eventually(
      [&] {
        auto store = open_if_there(db);
        if (!store || !store->find_sweep(name)) return false;
        const auto t = store->trial_by_number(store->find_sweep(name)->id, number);
        return t && t->state == TrialState::running && fs::exists(checkpoint_of(db, number));
      },
      std::chrono::seconds(60));
}

// Attempts count per trial: the worker killed once while each of trials 0, 1 and 2 ran (no trial
// hit twice) with --max-attempts 2. No trial used up its attempts, so the job runs on to its end,
// trial 3 included, every trial completed and none left `running`.
TEST(QueueCrash, WorkersKilledOnceInEachOfSeveralTrialsNeverFailTheJob) {
  QueueDir dir;
  dir.write("each.yaml", tiny_config("each", 4, 4, 16384, 256));
  const std::int64_t id =
      job_id_of(dir.sweep({"submit", "each.yaml", "--no-worker", "--max-attempts", "2"}));
  const fs::path db = dir.path() / "runs" / "each" / "sweep.db";
  for (std::int64_t victim = 0; victim < 3; ++victim) {
    const pid_t worker = dir.start_worker(worker_args({}));
    ASSERT_TRUE(wait_for_checkpointed_trial(db, "each", victim)) << "trial " << victim << "\n"
                                                                 << diagnose(dir, db, "each");
    dir.kill_hard(worker);
  }
  dir.start_worker(worker_args({"--idle-exit", "0.5"}));
  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "120"});
  EXPECT_EQ(wait.exit_code, 0) << wait.out << wait.err << diagnose(dir, db, "each");

  Queue queue(dir.queue_db(), {.read_only = true});
  const JobRow job = queue.job(id).row();
  EXPECT_EQ(job.state, JobState::done) << job.error;
  EXPECT_EQ(job.attempts, 4) << "three workers lost, the fourth ran it to the end";
  Store store(db, {.read_only = true});
  for (const TrialRow& t : store.trials(store.find_sweep("each")->id)) {
    EXPECT_EQ(t.state, TrialState::completed) << "trial " << t.number << ": " << t.error;
    EXPECT_EQ(t.attempts, t.number < 3 ? 2 : 1) << "trial " << t.number;
    EXPECT_EQ(t.summary.value("epochs_completed", 0), 4) << "trial " << t.number;
  }
  const CommandResult logs = dir.sweep({"logs", std::to_string(id)});
  EXPECT_NE(logs.out.find("trial 2 was running when the worker died (its loss 1 of 2)"),
            std::string::npos)
      << logs.out;
}

// A job that fails after its worker was lost (here: the directory it was submitted from is gone)
// leaves no trial `running`: the one the lost worker left is marked interrupted, with the reason,
// and keeps its checkpoint for `sweep resume`.
TEST(QueueCrash, AFailedJobLeavesNoTrialRunning) {
  QueueDir dir;
  dir.write("gone.yaml", tiny_config("gone", 2, 4, 16384, 256));
  const fs::path out = dir.path() / "out";
  const std::int64_t id =
      job_id_of(dir.sweep({"submit", "gone.yaml", "--no-worker", "--out", out.string()}));
  const fs::path db = out / "gone" / "sweep.db";
  const pid_t first = dir.start_worker(worker_args({}));
  ASSERT_TRUE(wait_for_checkpointed_trial(db, "gone", 0)) << diagnose(dir, db, "gone");
  dir.kill_hard(first);
  {  // The submit directory moves away while no worker holds the job.
    sqlite3* queue_db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.queue_db().c_str(), &queue_db), SQLITE_OK);
    const std::string sql = "UPDATE jobs SET working_dir = '" + (dir.path() / "moved").string() +
                            "' WHERE id = " + std::to_string(id);
    EXPECT_EQ(sqlite3_exec(queue_db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(queue_db);
  }
  dir.start_worker(worker_args({"--idle-exit", "0.5"}));
  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "60"});
  EXPECT_EQ(wait.exit_code, 1) << wait.out << wait.err;
  EXPECT_NE(wait.err.find("no longer exists"), std::string::npos) << wait.err;

  Store store(db, {.read_only = true});
  const auto sweep = store.find_sweep("gone");
  for (const TrialRow& t : store.trials(sweep->id))
    EXPECT_NE(t.state, TrialState::running) << "trial " << t.number;
  const TrialRow zero = *store.trial_by_number(sweep->id, 0);
  EXPECT_EQ(zero.state, TrialState::interrupted);
  EXPECT_NE(zero.stop_reason.find("job " + std::to_string(id) + " failed: "), std::string::npos)
      << zero.stop_reason;
  EXPECT_TRUE(fs::exists(checkpoint_of(db, 0)));
  EXPECT_EQ(sweep->state, SweepState::interrupted);
}

TEST(QueueCancel, AQueuedJobIsCancelledAtOnce) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("tiny", 1, 1));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  const CommandResult cancel = dir.sweep({"cancel", std::to_string(id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_EQ(dir.sweep({"wait", std::to_string(id), "--timeout", "5"}).exit_code, 3);
  EXPECT_NE(dir.sweep({"status"}).out.find("cancelled"), std::string::npos);
  const CommandResult again = dir.sweep({"cancel", std::to_string(id)});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already ended"), std::string::npos) << again.err;
  // A worker started now finds nothing to run.
  const pid_t worker = dir.start_worker(worker_args({"--idle-exit", "0.3"}));
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(20)), 0);
  EXPECT_FALSE(fs::exists(dir.path() / "runs" / "tiny"));
  // A job id that does not exist is an error, not a hang.
  EXPECT_NE(dir.sweep({"wait", "999", "--timeout", "1"}).exit_code, 0);
}

TEST(QueueCancel, ARunningJobStopsItsTrialsWhichKeepTheirCheckpoint) {
  QueueDir dir;
  dir.write("long.yaml", tiny_config("long", 2, 20, 16384, 256));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "long.yaml", "--no-worker"}));
  const fs::path db = dir.path() / "runs" / "long" / "sweep.db";
  const pid_t worker = dir.start_worker(worker_args({"--idle-exit", "0.5"}));
  ASSERT_TRUE(eventually(
      [&] {
        auto store = open_if_there(db);
        if (!store || !store->find_sweep("long")) return false;
        const auto t = store->trial_by_number(store->find_sweep("long")->id, 0);
        return t && t->state == TrialState::running && fs::exists(checkpoint_of(db, 0));
      },
      std::chrono::seconds(60)));
  EXPECT_EQ(dir.sweep({"cancel", std::to_string(id)}).exit_code, 0);
  EXPECT_EQ(dir.sweep({"wait", std::to_string(id), "--timeout", "30"}).exit_code, 3);
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(30)), 0);  // the worker went on, then idled

  Store store(db, {.read_only = true});
  const auto sweep = store.find_sweep("long");
  EXPECT_EQ(sweep->state, SweepState::cancelled);
  const TrialRow first = *store.trial_by_number(sweep->id, 0);
  EXPECT_EQ(first.state, TrialState::interrupted);
  EXPECT_TRUE(fs::exists(checkpoint_of(db, 0)));
  EXPECT_LT(first.summary.value("epochs_completed", 20), 20);
  EXPECT_NE(store.trial_by_number(sweep->id, 1)->state, TrialState::completed);
}

std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Starts `sweep logs JOB -f` once trial 0 of sweep `name` runs with a checkpoint written, and
// returns when -f has printed the log so far (it follows from then on).
QueueDir::Background follow_once_running(QueueDir& dir, std::int64_t id, const fs::path& db,
                                         const std::string& name) {
  EXPECT_TRUE(eventually(
      [&] {
        auto store = open_if_there(db);
        if (!store || !store->find_sweep(name)) return false;
        const auto t = store->trial_by_number(store->find_sweep(name)->id, 0);
        return t && t->state == TrialState::running && fs::exists(checkpoint_of(db, 0));
      },
      std::chrono::seconds(60)))
      << diagnose(dir, db, name);
  QueueDir::Background follow = dir.start_sweep({"logs", std::to_string(id), "-f"});
  EXPECT_TRUE(eventually([&] { return fs::exists(follow.out) && fs::file_size(follow.out) > 0; },
                         std::chrono::seconds(20)));
  return follow;
}

// `sweep logs -f` on a running job that is then cancelled prints the job's log to its last line:
// what the worker writes after the row says cancelled (its "stopping" line, the interrupted
// trial, the summary, "== job N cancelled"), not stopping at the row and dropping all of that.
TEST(QueueLogs, FollowPrintsACancelledJobsLogToItsLastLine) {
  QueueDir dir;
  dir.write("long.yaml", tiny_config("long", 2, 20, 16384, 256));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "long.yaml", "--no-worker"}));
  const fs::path db = dir.path() / "runs" / "long" / "sweep.db";
  // Heartbeats a second apart: the worker learns of the cancel up to a second after the row.
  const pid_t worker =
      dir.start_worker({"--lease", "5", "--heartbeat", "1", "--poll", "0.1", "--idle-exit", "0.5"});
  const QueueDir::Background follow = follow_once_running(dir, id, db, "long");
  ASSERT_EQ(dir.sweep({"cancel", std::to_string(id)}).exit_code, 0);
  const CommandResult followed = dir.finish(follow, std::chrono::seconds(60));
  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(30)), 0);  // done with the log, idle
  const std::string log = file_text(QueuePaths(dir.queue_db()).job_log(id));
  EXPECT_EQ(followed.out, log);
  const std::string last = "== job " + std::to_string(id) + " cancelled";
  EXPECT_NE(followed.out.find("\n" + last), std::string::npos) << followed.out;
  EXPECT_NE(followed.out.find("stopping: the job was cancelled"), std::string::npos)
      << followed.out;
  EXPECT_EQ(followed.err, "");
}

// A job run to its end: -f prints exactly the log, its "== TIME: job N done" line included
// (the row says done before the worker writes that line).
TEST(QueueLogs, FollowOfAJobRunToItsEndPrintsItsLogExactly) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("tiny", 2, 2));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  const pid_t worker =
      dir.start_worker({"--lease", "5", "--heartbeat", "1", "--poll", "0.1", "--idle-exit", "0.5"});
  const CommandResult followed =
      dir.finish(dir.start_sweep({"logs", std::to_string(id), "-f"}), std::chrono::seconds(60));
  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(30)), 0);
  EXPECT_EQ(followed.out, file_text(QueuePaths(dir.queue_db()).job_log(id)));
  EXPECT_NE(followed.out.find(": job " + std::to_string(id) + " done\n"), std::string::npos)
      << followed.out;
}

// The worker of a cancelled job is killed before it wrote its last line: -f does not wait for a
// line that never comes; it stops at once, saying why, having printed all the worker wrote.
TEST(QueueLogs, FollowStopsWhenACancelledJobsWorkerIsDead) {
  QueueDir dir;
  dir.write("long.yaml", tiny_config("long", 2, 20, 16384, 256));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "long.yaml", "--no-worker"}));
  const fs::path db = dir.path() / "runs" / "long" / "sweep.db";
  // A lease far longer than the test: -f must not wait for it.
  const pid_t worker = dir.start_worker({"--lease", "300", "--heartbeat", "1", "--poll", "0.1"});
  const QueueDir::Background follow = follow_once_running(dir, id, db, "long");
  dir.kill_hard(worker);
  ASSERT_EQ(dir.sweep({"cancel", std::to_string(id)}).exit_code, 0);
  const CommandResult followed = dir.finish(follow, std::chrono::seconds(20));
  EXPECT_EQ(followed.exit_code, 0) << followed.err;
  EXPECT_LT(followed.seconds, 10);
  EXPECT_EQ(followed.out, file_text(QueuePaths(dir.queue_db()).job_log(id)));
  EXPECT_NE(followed.err.find("died before finishing the log"), std::string::npos) << followed.err;
}

TEST(QueueFiles, ACorruptOrForeignQueueFileIsAClearError) {
  QueueDir dir;
  const fs::path junk = dir.path() / "junk.db";
  std::ofstream(junk) << std::string(4096, 'x');
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"status"}, {"submit", "x.yaml"}, {"cancel", "1"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--queue", junk.string()});
    dir.write("x.yaml", tiny_config("x", 1, 1));
    const CommandResult r = dir.sweep_raw(full);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_NE(r.err.find(junk.string()), std::string::npos) << args[0] << ": " << r.err;
  }
  // Another program's SQLite database.
  const fs::path foreign = dir.path() / "foreign.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE invoices (id INTEGER)", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const CommandResult r = dir.sweep_raw({"status", "--queue", foreign.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a sweep store"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sweep::queue::testing
