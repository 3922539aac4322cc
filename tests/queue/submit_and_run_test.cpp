// Submit → a detached worker → done, through the real binary; priority order; bad configs; the
// C++ API on the same queue; and several submitters at once while `sweep status` is polled.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <thread>

#include "common/json.h"
#include "queue_test_util.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::queue::testing {
namespace {

namespace fs = std::filesystem;

TEST(QueueSubmit, ReturnsAtOnceAndTheStartedWorkerRunsTheJobToDone) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("tiny", 2, 1));
  const CommandResult submit = dir.sweep({"submit", "tiny.yaml", "--worker-idle-exit", "1"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  // The goal is under a second; the bound leaves room for a loaded CI machine.
  EXPECT_LT(submit.seconds, 3.0);
  const std::int64_t id = job_id_of(submit);
  EXPECT_NE(submit.err.find("started a worker"), std::string::npos) << submit.err;

  const CommandResult wait = dir.sweep({"wait", std::to_string(id), "--timeout", "60"});
  EXPECT_EQ(wait.exit_code, 0) << wait.out << wait.err;
  EXPECT_EQ(wait.out, "job " + std::to_string(id) + " done\n");

  // Where `sweep run` would have put it, with every trial completed.
  const fs::path db = dir.path() / "runs" / "tiny" / "sweep.db";
  ASSERT_TRUE(fs::exists(db));
  Store store(db, {.read_only = true});
  const auto sweep = store.find_sweep("tiny");
  ASSERT_TRUE(sweep);
  EXPECT_EQ(sweep->state, SweepState::completed);
  const auto trials = store.trials(sweep->id);
  ASSERT_EQ(trials.size(), 2u);
  for (const TrialRow& t : trials) EXPECT_EQ(t.state, TrialState::completed) << t.error;
  EXPECT_TRUE(fs::exists(dir.path() / "runs" / "tiny" / "report.html"));

  const CommandResult status = dir.sweep({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("tiny"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("done"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("2/2 trials, best val_accuracy"), std::string::npos) << status.out;

  const CommandResult one = dir.sweep({"status", std::to_string(id)});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("learning_rate=0.02"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("completed"), std::string::npos) << one.out;

  const CommandResult fetch = dir.sweep({"fetch", std::to_string(id), "--json"});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  const auto json = sweep::Json::parse(fetch.out);
  EXPECT_EQ(json["job"]["state"], "done");
  ASSERT_EQ(json["trials"].size(), 2u);
  EXPECT_EQ(json["trials"][1]["state"], "completed");
  EXPECT_TRUE(json["trials"][1]["best"].is_number());
  EXPECT_TRUE(json["sweep"]["best"].is_object());

  const CommandResult table = dir.sweep({"fetch", std::to_string(id)});
  EXPECT_NE(table.out.find("best: trial"), std::string::npos) << table.out;

  const fs::path report = dir.path() / "job-report.html";
  const CommandResult report_command =
      dir.sweep({"report", std::to_string(id), "-o", report.string()});
  EXPECT_EQ(report_command.exit_code, 0) << report_command.err;
  EXPECT_TRUE(fs::exists(report)) << report_command.out;

  const CommandResult logs = dir.sweep({"logs", std::to_string(id)});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("job " + std::to_string(id) + " done"), std::string::npos) << logs.out;

  // The worker started by submit goes away by itself once the queue stays empty.
  EXPECT_TRUE(eventually([&] { return alive_workers(QueuePaths(dir.queue_db())).empty(); },
                         std::chrono::seconds(15)));
}

TEST(QueueSubmit, ABadConfigIsRejectedLikeValidateAndNothingIsQueued) {
  QueueDir dir;
  dir.write("bad.yaml", "data: {dataset: synthetic}\ntraining: {learning_rate: -1}\n");
  const CommandResult submit = dir.sweep({"submit", "bad.yaml", "--no-worker"});
  EXPECT_EQ(submit.exit_code, 2);
  EXPECT_NE(submit.err.find("bad.yaml:2:"), std::string::npos) << submit.err;
  EXPECT_NE(submit.err.find("learning_rate"), std::string::npos) << submit.err;
  EXPECT_NE(dir.sweep({"status"}).out.find("no jobs"), std::string::npos);
}

TEST(QueueSubmit, ASweepNameInUseIsRefusedWithAHint) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("same", 1, 1));
  ASSERT_EQ(dir.sweep({"submit", "tiny.yaml", "--no-worker"}).exit_code, 0);
  const CommandResult again = dir.sweep({"submit", "tiny.yaml", "--no-worker"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("--name"), std::string::npos) << again.err;
  EXPECT_EQ(dir.sweep({"submit", "tiny.yaml", "--no-worker", "--name", "other"}).exit_code, 0);
}

TEST(QueueWorker, RunsJobsByPriorityThenSubmitOrder) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("p", 1, 1, 128));
  std::vector<std::int64_t> ids;
  for (const auto& [name, priority] :
       std::vector<std::pair<std::string, std::string>>{{"low", "0"}, {"high", "5"}, {"low2", "0"}})
    ids.push_back(job_id_of(
        dir.sweep({"submit", "tiny.yaml", "--no-worker", "--name", name, "--priority", priority})));
  const pid_t worker = dir.start_worker({"--idle-exit", "0.5", "--poll", "0.1"});
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(60)), 0);
  Queue queue(dir.queue_db(), {.read_only = true});
  std::vector<std::pair<double, std::int64_t>> started;
  for (const JobRow& row : queue.jobs()) {
    EXPECT_EQ(row.state, JobState::done) << row.error;
    ASSERT_TRUE(row.started_at);
    started.emplace_back(*row.started_at, row.id);
  }
  std::sort(started.begin(), started.end());
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(started[0].second, ids[1]);
  EXPECT_EQ(started[1].second, ids[0]);
  EXPECT_EQ(started[2].second, ids[2]);
}

// `--devices all` is "every GPU, else the CPU slots" (execution: auto): on a machine without a GPU
// (CI) the job runs on the CPU instead of failing about resources.execution, a key nobody set.
TEST(QueueWorker, DevicesAllRunsOnTheCpuSlotsWhenThereIsNoGpu) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("all", 2, 1, 128));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  const pid_t worker = dir.start_worker(
      {"--devices", "all", "--cpu-slots", "2", "--idle-exit", "0.5", "--poll", "0.1"});
  EXPECT_EQ(dir.wait_exit(worker, std::chrono::seconds(60)), 0);
  Queue queue(dir.queue_db(), {.read_only = true});
  const JobRow row = queue.job(id).row();
  EXPECT_EQ(row.state, JobState::done) << row.error;
  EXPECT_EQ(row.error, "");
}

// A worker given GPUs this machine does not have refuses to start, saying so, and leaves the queue
// alone. Before, it claimed every job and failed each on its devices until the queue was empty.
TEST(QueueWorker, DevicesThisMachineLacksAreRefusedBeforeAnyJobIsClaimed) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("lacking", 1, 1, 128));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  const CommandResult worker = dir.sweep({"worker", "--devices", "99", "--idle-exit", "0.5"});
  EXPECT_EQ(worker.exit_code, 1);
  EXPECT_NE(worker.err.find("--devices 99: "), std::string::npos) << worker.err;
  Queue queue(dir.queue_db(), {.read_only = true});
  EXPECT_EQ(queue.job(id).row().state, JobState::queued);
}

// Nonsense numbers on the worker's flags are a bad command line: one line naming the flag, the
// value and what it takes, exit 2, before anything is claimed (also with --detach: no worker
// starts). Before, `--lease nan` ran with a NULL lease (a killed worker's job was never reclaimed),
// `--idle-exit -1` meant never, `--cpu-slots 0` was ignored and `--heartbeat 1e-9` was taken.
TEST(QueueWorker, NonsenseFlagValuesAreRefusedBeforeAnyJobIsClaimed) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("nonsense", 1, 1, 128));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  struct Case {
    std::vector<std::string> args;
    std::string says;  // on the first line of stderr
  };
  const std::vector<Case> cases = {
      {{"--lease", "nan"}, "--lease: nan: expected seconds above 0"},
      {{"--lease", "inf"}, "--lease: inf: expected seconds above 0"},
      {{"--lease", "0"}, "--lease: 0: expected seconds above 0"},
      {{"--lease", "-10"}, "--lease: -10: expected seconds above 0"},
      {{"--lease", "1e9"}, "--lease: 1e9: expected seconds above 0, at most 604800 (a week)"},
      {{"--heartbeat", "1e-9"}, "--heartbeat: 1e-9: expected seconds from 0.1"},
      {{"--heartbeat", "nan"}, "--heartbeat: nan: expected seconds from 0.1"},
      {{"--heartbeat", "-1"}, "--heartbeat: -1: expected seconds from 0.1"},
      {{"--lease", "2", "--heartbeat", "2"},
       "--heartbeat: 2: expected a heartbeat shorter than --lease 2"},
      {{"--lease", "1"},
       "--heartbeat: 2 (the default): expected a heartbeat shorter than --lease 1"},
      {{"--idle-exit", "-1"}, "--idle-exit: -1: expected seconds from 0 (0: never exit)"},
      {{"--idle-exit", "nan"}, "--idle-exit: nan: expected seconds from 0 (0: never exit)"},
      {{"--cpu-slots", "0"}, "--cpu-slots: 0: expected a whole number of slots from 1 to 1024"},
      {{"--cpu-slots", "-2"}, "--cpu-slots: -2: expected a whole number of slots from 1 to 1024"},
      {{"--cpu-slots", "1025"},
       "--cpu-slots: 1025: expected a whole number of slots from 1 to 1024"},
      {{"--poll", "0"}, "--poll: 0: expected seconds from 0.01"},
      {{"--poll", "nan"}, "--poll: nan: expected seconds from 0.01"},
  };
  for (const bool detach : {false, true}) {
    for (const Case& c : cases) {
      std::vector<std::string> args = {"worker"};
      if (detach) args.push_back("--detach");
      args.insert(args.end(), c.args.begin(), c.args.end());
      // A worker that takes the value would run the job, then exit this soon (unless the value is
      // its --idle-exit: then the timeout below ends it).
      if (std::find(c.args.begin(), c.args.end(), "--idle-exit") == c.args.end())
        args.insert(args.end(), {"--idle-exit", "0.5"});
      const CommandResult r = dir.sweep(args, std::chrono::seconds(20));
      const std::string first_line = r.err.substr(0, r.err.find('\n'));
      EXPECT_EQ(r.exit_code, 2) << (detach ? "--detach " : "") << c.args[0] << " " << c.args[1]
                                << ": " << r.out << r.err;
      EXPECT_NE(first_line.find(c.says), std::string::npos)
          << (detach ? "--detach: " : "") << c.says << "\nnot in: " << r.err;
      EXPECT_EQ(r.out, "");
    }
  }
  // The worker `sweep submit` starts takes the same bound for its idle time, checked at submit.
  const CommandResult submit =
      dir.sweep({"submit", "tiny.yaml", "--name", "other", "--worker-idle-exit", "-1"});
  EXPECT_EQ(submit.exit_code, 2) << submit.out << submit.err;
  EXPECT_NE(submit.err.find("--worker-idle-exit: -1: expected seconds from 0"), std::string::npos)
      << submit.err;

  Queue queue(dir.queue_db(), {.read_only = true});
  ASSERT_EQ(queue.jobs().size(), 1u) << "the refused submit queued nothing";
  const JobRow row = queue.job(id).row();
  EXPECT_EQ(row.state, JobState::queued);
  EXPECT_EQ(row.attempts, 0) << "nothing was claimed";
  EXPECT_TRUE(alive_workers(QueuePaths(dir.queue_db())).empty());
  EXPECT_FALSE(fs::exists(QueuePaths(dir.queue_db()).job_log(id)));
}

// Every number the queue's commands take is bounded as the command line is read, as worker.h's
// are: exit 2 and one line naming the flag, before anything is stored or waited for. `wait
// --timeout -1` (or nan, -inf, '') waited for good; an empty value read as 0, and a whole number
// with a leading 0 as octal.
TEST(QueueCommands, EveryNumberIsBoundedAsTheCommandLineIsRead) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("bounds", 1, 1, 128));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  const std::string job = std::to_string(id);
  struct Case {
    std::vector<std::string> args;
    std::string says;  // on the first line of stderr
  };
  const std::string wait_bound =
      "expected seconds from 0 (0: wait until the job ends), at most "
      "604800 (a week)";
  const std::string attempts_bound = "expected a whole number of attempts from 1 to 100";
  const std::vector<Case> cases = {
      {{"wait", job, "--timeout", "-1"}, "--timeout: -1: " + wait_bound},
      {{"wait", job, "--timeout", "nan"}, "--timeout: nan: " + wait_bound},
      {{"wait", job, "--timeout", "-inf"}, "--timeout: -inf: " + wait_bound},
      {{"wait", job, "--timeout", "inf"}, "--timeout: inf: " + wait_bound},
      {{"wait", job, "--timeout", "1e9"}, "--timeout: 1e9: " + wait_bound},
      {{"wait", job, "--timeout", ""}, "--timeout: '': expected a number, not an empty value"},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", "0"},
       "--max-attempts: 0: " + attempts_bound},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", "-1"},
       "--max-attempts: -1: " + attempts_bound},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", "101"},
       "--max-attempts: 101: " + attempts_bound},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", "2147483648"},
       "--max-attempts: 2147483648: " + attempts_bound},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", ""},
       "--max-attempts: '': expected a number"},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--max-attempts", "2.5"},
       "--max-attempts: 2.5: expected a whole number"},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--priority", "9007199254740993"},
       "--priority: 9007199254740993: expected a whole number from -9007199254740992 to "
       "9007199254740992"},
      {{"submit", "tiny.yaml", "--no-worker", "--name", "b", "--priority", ""},
       "--priority: '': expected a number"},
      {{"worker", "--cpu-slots", ""}, "--cpu-slots: '': expected a number"},
      {{"worker", "--lease", ""}, "--lease: '': expected a number"},
      {{"worker", "--idle-exit", ""}, "--idle-exit: '': expected a number"},
      // Hidden (a detaching worker passes it to its child): CLI11 names no flag for it.
      {{"worker", "--registration-fd", "1", "--worker-id", "x"},
       "1: expected the file descriptor of an inherited worker lock"},
  };
  for (const Case& c : cases) {
    const CommandResult r = dir.sweep(c.args, std::chrono::seconds(20));
    std::string shown;
    for (const std::string& arg : c.args) shown += " '" + arg + "'";
    EXPECT_EQ(r.exit_code, 2) << shown << ": " << r.out << r.err;
    EXPECT_NE(r.err.substr(0, r.err.find('\n')).find(c.says), std::string::npos)
        << shown << ": " << c.says << "\nnot in: " << r.err;
    EXPECT_EQ(r.out, "") << shown;
  }
  Queue queue(dir.queue_db(), {.read_only = true});
  ASSERT_EQ(queue.jobs().size(), 1u) << "a refused submit queued nothing";
  EXPECT_EQ(queue.job(id).row().attempts, 0) << "nothing was claimed";

  // Whole numbers are decimal: 010 is ten, not CLI11's octal eight.
  const std::int64_t decimal =
      job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker", "--name", "c", "--priority", "010",
                           "--max-attempts", "010"}));
  const JobRow row = Queue(dir.queue_db(), {.read_only = true}).job(decimal).row();
  EXPECT_EQ(row.priority, 10);
  EXPECT_EQ(row.target.trial_crash_limit, 10);
  // In bounds: a wait that times out says so with its own exit status.
  EXPECT_EQ(dir.sweep({"wait", job, "--timeout", "0.2"}).exit_code, 124);
}

// Issue 42's hostile pass, #48/#47: `cancel ''` exited 2 but created the queue first, and
// `status abc` without a queue said "no jobs", exit 0. A bad job id is a usage error whether or
// not a queue exists, and no command that reads or cancels creates one.
TEST(QueueCommands, JobIdsAreCheckedBeforeTheQueueAndReadersNeverCreateIt) {
  QueueDir dir;
  for (const bool queue_exists : {false, true}) {
    if (queue_exists) {
      dir.write("tiny.yaml", tiny_config("ids", 1, 1, 128));
      job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
    }
    for (const std::string command : {"status", "wait", "logs", "fetch", "cancel"}) {
      for (const std::string bad : {"", "abc", "0", "-1", "1x"}) {
        const CommandResult r = dir.sweep({command, bad}, std::chrono::seconds(20));
        EXPECT_EQ(r.exit_code, 2) << command << " '" << bad << "': " << r.out << r.err;
        EXPECT_NE(r.err.find("is not a job id"), std::string::npos) << command << ": " << r.err;
        EXPECT_EQ(r.out, "") << command;
      }
      if (queue_exists) continue;
      const CommandResult missing = dir.sweep({command, "5"}, std::chrono::seconds(20));
      EXPECT_EQ(missing.exit_code, 1) << command << ": " << missing.out << missing.err;
      EXPECT_NE(missing.err.find("queue database"), std::string::npos) << command << missing.err;
      EXPECT_FALSE(fs::exists(dir.queue_db())) << command << " created the queue";
    }
  }
}

// #66: `sweep worker --devices ''` ran jobs as if the flag were not given.
TEST(QueueWorker, AnEmptyDevicesValueIsRefused) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("nodevices", 1, 1, 128));
  const std::int64_t id = job_id_of(dir.sweep({"submit", "tiny.yaml", "--no-worker"}));
  for (const bool detach : {false, true}) {
    std::vector<std::string> args = {"worker", "--devices", "", "--idle-exit", "0.5"};
    if (detach) args.push_back("--detach");
    const CommandResult r = dir.sweep(args, std::chrono::seconds(20));
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--devices: '': expected cpu, all or GPU indices"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(Queue(dir.queue_db(), {.read_only = true}).job(id).row().attempts, 0);
}

// #62: a sweep's own results database was taken as the queue and given a job row.
TEST(QueueSubmit, ASweepsResultsDatabaseIsNotAQueue) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("other", 1, 1, 128));
  const fs::path results = dir.path() / "runs" / "base" / "sweep.db";
  fs::create_directories(results.parent_path());
  {
    Store store(results);
    store.create_sweep({.name = "base", .config_yaml = "name: base\n", .metric_name = "loss"});
  }
  const CommandResult r =
      dir.sweep_raw({"submit", "tiny.yaml", "--queue", results.string(), "--no-worker"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("is the results database of sweep 'base', not a job queue"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(Store(results, {.read_only = true}).jobs().empty());
}

// #64: `--out F` with F a file was queued; the job failed later with "Not a directory".
TEST(QueueSubmit, AnOutThatIsNotADirectoryIsRefusedAtSubmit) {
  QueueDir dir;
  dir.write("tiny.yaml", tiny_config("outfile", 1, 1, 128));
  dir.write("f", "x\n");
  for (const std::string out : {"f", "f/below", ""}) {
    const CommandResult r = dir.sweep({"submit", "tiny.yaml", "--out", out, "--no-worker"});
    EXPECT_EQ(r.exit_code, 2) << out << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--out: "), std::string::npos) << r.err;
    if (!out.empty()) {
      EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
    }
  }
  // A config's output.dir that is a file is refused by submit too, naming the directory.
  dir.write("tofile.yaml", tiny_config("tofile", 1, 1, 128) + "\noutput:\n  dir: f\n");
  const CommandResult r = dir.sweep({"submit", "tofile.yaml", "--no-worker"});
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.queue_db()) &&
               !Queue(dir.queue_db(), {.read_only = true}).jobs().empty());
}

TEST(QueueApi, SubmitWaitFetchFromCpp) {
  QueueDir dir;
  const std::string config = dir.write("api.yaml", tiny_config("api", 2, 1, 128));
  Queue queue(dir.queue_db());
  SubmitOptions options;
  options.working_dir = dir.path().string();
  options.overrides = {"training.epochs=2"};
  options.worker_binary = SWEEP_BIN;
  options.worker_idle_exit_s = 1;
  const Job job = queue.submit(config, options);
  EXPECT_FALSE(is_terminal(job.state()));
  EXPECT_EQ(job.wait(std::chrono::seconds(60)), JobState::done);
  const JobResults results = job.fetch();
  EXPECT_TRUE(results.started);
  EXPECT_EQ(results.db_path, dir.path() / "runs" / "api" / "sweep.db");
  ASSERT_EQ(results.trials.size(), 2u);
  ASSERT_TRUE(results.best);
  // The override reached the worker: each trial trained 2 epochs.
  Store store(results.db_path, {.read_only = true});
  for (const TrialRow& t : store.trials(store.find_sweep("api")->id))
    EXPECT_EQ(t.summary.value("epochs_completed", 0), 2);
  EXPECT_FALSE(job.cancel());  // already ended
  EXPECT_TRUE(
      eventually([&] { return alive_workers(queue.paths()).empty(); }, std::chrono::seconds(15)));
}

// A tpe sweep (trials made as slots free) is a job like any other.
TEST(QueueApi, ATpeSweepRunsLikeAnyOther) {
  QueueDir dir;
  const std::string config = dir.write("tpe.yaml", tiny_config("tpe", 4, 1, 128));
  Queue queue(dir.queue_db());
  SubmitOptions options;
  options.working_dir = dir.path().string();
  options.overrides = {"sweep.method=tpe", "sweep.max_trials=3"};
  options.worker_binary = SWEEP_BIN;
  options.worker_idle_exit_s = 1;
  const Job job = queue.submit(config, options);
  EXPECT_EQ(job.wait(std::chrono::seconds(60)), JobState::done) << job.row().error;
  const JobResults results = job.fetch();
  ASSERT_EQ(results.trials.size(), 3u);
  ASSERT_TRUE(results.best);
  std::set<std::string> points;
  for (const auto& trial : results.trials) points.insert(trial.params.dump());
  EXPECT_EQ(points.size(), 3u);  // four values to choose from: no point twice
  EXPECT_TRUE(
      eventually([&] { return alive_workers(queue.paths()).empty(); }, std::chrono::seconds(15)));
}

TEST(QueueConcurrency, EightSubmittersAtOnceGetEightJobsAndStatusNeverFails) {
  QueueDir dir;
  // Each job long enough (about a second) that the readers below poll while the worker writes.
  dir.write("tiny.yaml", tiny_config("many", 1, 4, 8192, 64));
  std::vector<pid_t> submitters;
  std::vector<std::string> outs;
  for (int i = 0; i < 8; ++i) {
    const std::string out = (dir.path() / ("submit" + std::to_string(i) + ".out")).string();
    outs.push_back(out);
    const std::string name = "many" + std::to_string(i);
    const std::string queue_db = dir.queue_db().string();
    const std::string cwd = dir.path().string();
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::chdir(cwd.c_str()) != 0 || !std::freopen(out.c_str(), "w", stdout)) ::_exit(126);
      ::execl(SWEEP_BIN, SWEEP_BIN, "submit", "tiny.yaml", "--name", name.c_str(), "--queue",
              queue_db.c_str(), "--worker-idle-exit", "1", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    submitters.push_back(pid);
  }
  for (pid_t pid : submitters) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::set<std::int64_t> ids;
  for (const std::string& out : outs) {
    std::ifstream in(out);
    std::int64_t id = 0;
    in >> id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_FALSE(ids.count(0));

  // One worker for all of them: the spawn lock let exactly one submitter start it.
  int worker_logs = 0;
  for (const auto& entry : fs::directory_iterator(dir.queue_db().parent_path() / "workers"))
    worker_logs += entry.path().extension() == ".log";
  EXPECT_EQ(worker_logs, 1);

  // Readers while the worker writes: never "database is locked", never a failure.
  Queue queue(dir.queue_db(), {.read_only = true});
  int polls = 0;
  const bool all_done = eventually(
      [&] {
        const CommandResult status = dir.sweep({"status"});
        const CommandResult one = dir.sweep({"status", std::to_string(*ids.rbegin())});
        ++polls;
        EXPECT_EQ(status.exit_code, 0) << status.err;
        EXPECT_EQ(one.exit_code, 0) << one.err;
        EXPECT_EQ(status.err.find("locked"), std::string::npos) << status.err;
        EXPECT_EQ(one.err.find("locked"), std::string::npos) << one.err;
        for (const JobRow& row : queue.jobs())
          if (row.state != JobState::done) return false;
        return true;
      },
      std::chrono::seconds(90));
  EXPECT_TRUE(all_done);
  // How many polls overlapped the worker depends on the machine's speed: at least one ran.
  EXPECT_GE(polls, 1);
  for (const JobRow& row : queue.jobs()) EXPECT_EQ(row.attempts, 1) << "job " << row.id;
}

}  // namespace
}  // namespace sweep::queue::testing
