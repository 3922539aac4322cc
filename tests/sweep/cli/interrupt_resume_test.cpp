// `sweep run` then Ctrl-C then `sweep resume`, as a user does it: the child process gets a real
// SIGINT while a trial trains; the running trial must checkpoint and end `interrupted`, the sweep
// must be resumable, and after `sweep resume` every trial is completed with no trial trained
// twice (those completed before the interrupt are not started again: attempts stay 1).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "store/store.h"
#include "sweep_process_util.h"

namespace {

namespace fs = std::filesystem;
using sweep::testing::slurp;
using sweep::testing::spawn_sweep;
using sweep::testing::wait_exit;

sweep::Store open_read_only(const fs::path& db) {
  sweep::StoreOptions options;
  options.read_only = true;
  return sweep::Store(db, options);
}

// A sweep of four trials, one at a time: trials 0 and 1 train one short epoch, trials 2 and 3
// about two seconds each, so a Ctrl-C after trial 0 lands while trial 2 trains.
fs::path write_slow_config(const fs::path& dir) {
  const fs::path config = dir / "slow.yaml";
  std::ofstream(config)
      << "name: slow\n"
         "data: {dataset: synthetic, synthetic: {train_size: 2000, test_size: 200}}\n"
         "model: {preset: mlp, hidden: [128]}\n"
         "training: {batch_size: 32, log_every: 5}\n"
         "sweep:\n  parameters:\n"
         "    training.epochs: {values: [1, 25]}\n"
         "    training.learning_rate: {values: [0.01, 0.02]}\n"
         "resources: {cpu_slots: 1, cpu_threads: 1}\n"
         "output: {dir: "
      << dir.string() << "}\n";
  return config;
}

// Waits until one trial completed and a later one has reported metrics.
bool wait_until_training(const fs::path& db) {
  std::optional<sweep::Store> watcher;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!fs::exists(db)) continue;
    try {
      if (!watcher) watcher.emplace(open_read_only(db));
      const auto sweep = watcher->find_sweep("slow");
      if (!sweep) continue;
      bool one_completed = false, one_training = false;
      for (const auto& t : watcher->trials(sweep->id)) {
        one_completed = one_completed || t.state == sweep::TrialState::completed;
        one_training = one_training || (t.state == sweep::TrialState::running && t.number > 0 &&
                                        !watcher->trial_metrics(t.id).empty());
      }
      if (one_completed && one_training) return true;
    } catch (const sweep::Error&) {
      // The database is being created; try again.
    }
  }
  return false;
}

// Every file under `dir` with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file())
      files[fs::relative(entry.path(), dir).string()] = slurp(entry.path());
  return files;
}

// A fresh directory with the slow sweep's config, and `sweep run` of it started and waited for
// until a trial trains (trial 0 done, trial 2 reporting).
struct RunningSweep {
  fs::path dir, config, db;
  pid_t pid = -1;

  explicit RunningSweep(const std::string& tag)
      : dir(fs::temp_directory_path() / ("sweep_" + tag + "_" + std::to_string(::getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    config = write_slow_config(dir);
    db = dir / "slow" / "sweep.db";
    pid = spawn_sweep({"run", config.string()}, dir / "run.log");
  }
  ~RunningSweep() { fs::remove_all(dir); }
  bool training() const { return wait_until_training(db); }
  std::string log() const { return slurp(dir / "run.log"); }
};

// `sweep resume` while `sweep run` of the same sweep still trains: refused at once, saying who
// holds the sweep, and nothing is changed (no trial started twice, no "resumed" event).
TEST(InterruptResume, ResumeWhileTheSweepRunsIsRefused) {
  const RunningSweep run("lock");
  const fs::path &dir = run.dir, &config = run.config, &db = run.db;
  const pid_t pid = run.pid;
  ASSERT_TRUE(run.training()) << run.log();

  const pid_t second = spawn_sweep({"resume", "slow", "--out", dir.string()}, dir / "second.log");
  EXPECT_EQ(wait_exit(second), 1) << slurp(dir / "second.log");
  const std::string said = slurp(dir / "second.log");
  EXPECT_NE(said.find("sweep 'slow' is being run by another process (pid " + std::to_string(pid)),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("Nothing was changed"), std::string::npos) << said;
  // `sweep run` of the same file is refused the same way.
  const pid_t third = spawn_sweep({"run", config.string()}, dir / "third.log");
  EXPECT_EQ(wait_exit(third), 1);
  EXPECT_NE(slurp(dir / "third.log").find("is being run by another process"), std::string::npos)
      << slurp(dir / "third.log");

  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(pid), 130) << slurp(dir / "run.log");
  {
    const sweep::Store store = open_read_only(db);
    const auto sweep = store.find_sweep("slow");
    for (const auto& t : store.trials(sweep->id)) EXPECT_LE(t.attempts, 1) << "trial " << t.number;
    for (const auto& e : store.events(sweep->id)) EXPECT_NE(e.kind, "resumed") << e.message;
  }
  // The lock died with its process: now the resume runs.
  const pid_t resumed = spawn_sweep({"resume", "slow", "--out", dir.string()}, dir / "resume.log");
  EXPECT_EQ(wait_exit(resumed), 0) << slurp(dir / "resume.log");
}

// A sweep directory is relocatable: interrupted, copied elsewhere and resumed there, it writes
// only into the copy (logs, checkpoints, report), and the original's bytes stay as they were.
TEST(InterruptResume, ACopiedSweepResumesInItsNewPlace) {
  const RunningSweep run("copy");
  const fs::path& dir = run.dir;
  const fs::path elsewhere = dir / "elsewhere";
  ASSERT_TRUE(run.training()) << run.log();
  ASSERT_EQ(::kill(run.pid, SIGINT), 0);
  ASSERT_EQ(wait_exit(run.pid), 130) << run.log();
  fs::create_directories(elsewhere);

  fs::copy(dir / "slow", elsewhere / "slow", fs::copy_options::recursive);
  const auto original = snapshot(dir / "slow");
  const pid_t resumed =
      spawn_sweep({"resume", "slow", "--out", elsewhere.string()}, dir / "resume.log");
  EXPECT_EQ(wait_exit(resumed), 0) << slurp(dir / "resume.log");
  EXPECT_EQ(snapshot(dir / "slow"), original) << "the original sweep directory was changed";

  const sweep::Store store = open_read_only(elsewhere / "slow" / "sweep.db");
  const auto sweep = store.find_sweep("slow");
  for (const auto& t : store.trials(sweep->id)) {
    EXPECT_EQ(t.state, sweep::TrialState::completed) << "trial " << t.number;
    EXPECT_FALSE(fs::path(t.log_path).is_absolute()) << t.log_path;
    EXPECT_TRUE(fs::exists(elsewhere / "slow" / t.log_path)) << t.log_path;
  }
  EXPECT_TRUE(fs::exists(elsewhere / "slow" / "report.html"));
  EXPECT_NE(slurp(dir / "resume.log").find((elsewhere / "slow").string()), std::string::npos);
}

TEST(InterruptResume, CtrlCCheckpointsAndResumeFinishesWithoutRetraining) {
  // The Ctrl-C lands while trial 2 trains and trial 3 has not started (write_slow_config).
  const RunningSweep run("sigint");
  const fs::path &dir = run.dir, &db = run.db;
  ASSERT_TRUE(run.training()) << run.log();
  ASSERT_EQ(::kill(run.pid, SIGINT), 0);
  EXPECT_EQ(wait_exit(run.pid), 130) << run.log();
  const std::string run_log = slurp(dir / "run.log");
  EXPECT_NE(run_log.find("sweep resume slow"), std::string::npos) << run_log;

  std::vector<std::int64_t> completed_before, interrupted_running;
  {
    const sweep::Store store = open_read_only(db);
    const auto sweep = store.find_sweep("slow");
    ASSERT_TRUE(sweep.has_value());
    EXPECT_EQ(sweep->state, sweep::SweepState::interrupted);
    for (const auto& t : store.trials(sweep->id)) {
      if (t.state == sweep::TrialState::completed) completed_before.push_back(t.number);
      // A trial never started is still queued: it was not interrupted, it never ran.
      if (t.attempts == 0) {
        EXPECT_EQ(t.state, sweep::TrialState::queued) << "trial " << t.number;
      }
      if (t.state == sweep::TrialState::interrupted && t.attempts == 1) {
        interrupted_running.push_back(t.number);
        EXPECT_TRUE(fs::exists(db.parent_path() / t.checkpoint_path))
            << "trial " << t.number << " has no checkpoint";
      }
    }
  }
  ASSERT_FALSE(completed_before.empty());
  // One trial was training when Ctrl-C came (none only if it had just finished its last step).
  ASSERT_LE(interrupted_running.size(), 1u) << run_log;

  const pid_t resumed = spawn_sweep({"resume", "slow", "--out", dir.string()}, dir / "resume.log");
  EXPECT_EQ(wait_exit(resumed), 0) << slurp(dir / "resume.log");

  const sweep::Store store = open_read_only(db);
  const auto sweep = store.find_sweep("slow");
  EXPECT_EQ(sweep->state, sweep::SweepState::completed);
  for (const auto& t : store.trials(sweep->id)) {
    EXPECT_EQ(t.state, sweep::TrialState::completed) << "trial " << t.number;
    const bool was_done = std::find(completed_before.begin(), completed_before.end(), t.number) !=
                          completed_before.end();
    const bool was_running = std::find(interrupted_running.begin(), interrupted_running.end(),
                                       t.number) != interrupted_running.end();
    // Completed trials are never started again; the interrupted one is started a second time,
    // from its checkpoint; those that never started are started once.
    EXPECT_EQ(t.attempts, was_running ? 2 : 1) << "trial " << t.number;
    if (was_done) {
      EXPECT_FALSE(t.summary.empty());
    }
  }
  bool resumed_event = false;
  for (const auto& e : store.events(sweep->id))
    resumed_event = resumed_event || (e.kind == "resumed" && e.trial_id.has_value());
  EXPECT_EQ(resumed_event, !interrupted_running.empty())
      << "no trial continued from its checkpoint";
}

// A sweep resumed where its data is no longer at the stored data.path (copied to another machine,
// the data moved): the refusal says how to go on, `--set data.path=` goes on, and a --set of
// anything but data.path and resources.* is refused before the sweep is touched.
TEST(InterruptResume, AResumeTakesTheDataWhereItIsNow) {
  const fs::path installed = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(installed / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const fs::path dir = fs::temp_directory_path() / ("sweep_moved_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "data-a");
  for (const auto& entry : fs::directory_iterator(installed))
    fs::create_symlink(entry.path(), dir / "data-a" / entry.path().filename());
  const fs::path config = dir / "moved.yaml";
  std::ofstream(config) << "name: moved\n"
                           "data: {dataset: fashion-mnist, path: "
                        << (dir / "data-a").string()
                        << ", train_limit: 600, test_limit: 100}\n"
                           "model: {preset: mlp, hidden: [16]}\n"
                           "training: {batch_size: 50, epochs: 1}\n"
                           "sweep:\n  parameters:\n"
                           "    training.learning_rate: {values: [0.01, 0.02]}\n"
                           "resources: {cpu_slots: 1, cpu_threads: 1}\n"
                           "output: {dir: "
                        << dir.string() << "}\n";
  ASSERT_EQ(wait_exit(spawn_sweep({"run", config.string()}, dir / "run.log")), 0)
      << slurp(dir / "run.log");
  fs::rename(dir / "data-a", dir / "data-b");
  const std::string sweep_dir = (dir / "moved").string();

  EXPECT_EQ(wait_exit(spawn_sweep({"resume", sweep_dir}, dir / "r1.log")), 2);
  EXPECT_NE(slurp(dir / "r1.log")
                .find("(the data is elsewhere now? sweep resume moved --set "
                      "data.path=DIR)"),
            std::string::npos)
      << slurp(dir / "r1.log");
  const auto before = snapshot(dir / "moved");
  EXPECT_EQ(wait_exit(spawn_sweep({"resume", sweep_dir, "--set", "training.epochs=3", "--set",
                                   "data.path=" + (dir / "data-b").string()},
                                  dir / "r2.log")),
            2);
  EXPECT_NE(slurp(dir / "r2.log")
                .find("'training.epochs' would change what its finished trials "
                      "were trained with"),
            std::string::npos)
      << slurp(dir / "r2.log");
  EXPECT_EQ(snapshot(dir / "moved"), before) << "a refused resume changed the sweep";
  EXPECT_EQ(wait_exit(spawn_sweep(
                {"resume", sweep_dir, "--set", "data.path=" + (dir / "data-b").string()},
                dir / "r3.log")),
            0)
      << slurp(dir / "r3.log");
  fs::remove_all(dir);
}

}  // namespace
