// `sweep run` stopped by SIGTERM (timeout, docker stop, scancel) as by Ctrl-C: exit 143, the
// running trial `interrupted` and resumable, its external trainer's processes ended. A second
// signal quits at once, and no process of the trainer outlives sweep, setsid'd ones included.
// (SIGTERM killed sweep outright and left the trainer, its children and the trial `running`; a
// second Ctrl-C left them too.)
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "tests/sweep/sweep_process_util.h"

namespace sweep::testing {
namespace {

namespace fs = std::filesystem;

// Live processes whose command line holds `text` (zombies have none).
std::vector<pid_t> processes_naming(const std::string& text) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline(std::istreambuf_iterator<char>(in), {});
    if (cmdline.find(text) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

int processes_running(const fs::path& program) {
  return static_cast<int>(processes_naming(program.string()).size());
}

bool wait_for_count(const fs::path& program, int count, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (processes_running(program) != count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// A trainer that leaves two sleepers behind it, one in its process group and one setsid'd, and
// reports forever. Returns the sleepers' program (a copy of sleep with a name of its own).
fs::path write_sweep(const fs::path& dir) {
  const fs::path sleeper = dir / "sleeper";
  fs::copy_file("/bin/sleep", sleeper);
  std::ofstream(dir / "trainer.sh")
      << "#!/bin/bash\n"
      << "'" << sleeper.string() << "' 300 &\n"
      << "setsid '" << sleeper.string() << "' 300 &\n"
      << "i=0; while :; do echo \"{\\\"step\\\": $i, \\\"val_accuracy\\\": 0.5}\"; "
         "i=$((i+1)); sleep 0.2; done\n";
  std::ofstream(dir / "sweep.yaml")
      << "name: sig\n"
      << "trainer: {command: \"bash " << (dir / "trainer.sh").string() << "\"}\n"
      << "sweep: {method: grid, metric: {name: val_accuracy, goal: maximize},\n"
      << "        parameters: {a: {values: [1, 2]}}}\n"
      << "resources: {execution: cpu, cpu_slots: 1}\n"
      << "output: {dir: " << (dir / "runs").string() << "}\n";
  return sleeper;
}

TEST(StopSignals, SigtermStopsAsCtrlCDoesAndEndsTheTrainersProcesses) {
  const fs::path dir = fresh_dir("sweep_sigterm");
  const fs::path sleeper = write_sweep(dir);
  const pid_t sweep = spawn_sweep({"run", (dir / "sweep.yaml").string()}, dir / "log");
  ASSERT_TRUE(wait_for_count(sleeper, 2, std::chrono::seconds(30))) << slurp(dir / "log");
  ASSERT_EQ(::kill(sweep, SIGTERM), 0);
  EXPECT_EQ(wait_exit(sweep), 143) << slurp(dir / "log");
  EXPECT_TRUE(wait_for_count(sleeper, 0, std::chrono::seconds(5)));
  const std::string log = slurp(dir / "log");
  EXPECT_NE(log.find("SIGTERM: stopping"), std::string::npos) << log;
  Store store(dir / "runs" / "sig" / "sweep.db");
  const auto sweep_row = store.find_sweep("sig");
  ASSERT_TRUE(sweep_row);
  EXPECT_EQ(sweep_row->state, SweepState::interrupted);
  const auto trials = store.trials(sweep_row->id);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].state, TrialState::interrupted);
  EXPECT_EQ(trials[1].state, TrialState::queued);
  fs::remove_all(dir);
}

TEST(StopSignals, ASecondSignalQuitsAtOnceAndLeavesNoTrainerProcess) {
  const fs::path dir = fresh_dir("sweep_second_signal");
  const fs::path sleeper = write_sweep(dir);
  const pid_t sweep = spawn_sweep({"run", (dir / "sweep.yaml").string()}, dir / "log");
  ASSERT_TRUE(wait_for_count(sleeper, 2, std::chrono::seconds(30))) << slurp(dir / "log");
  ASSERT_EQ(::kill(sweep, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(::kill(sweep, SIGINT), 0);
  EXPECT_EQ(wait_exit(sweep), 130) << slurp(dir / "log");
  EXPECT_TRUE(wait_for_count(sleeper, 0, std::chrono::seconds(5)))
      << processes_running(sleeper) << " left\n"
      << slurp(dir / "log");
  fs::remove_all(dir);
}

// What `sweep show` prints of a sweep (its output, through a file).
std::string show(const fs::path& dir) {
  const pid_t pid =
      spawn_sweep({"show", "sig", "--out", (dir / "runs").string()}, dir / "show.log");
  EXPECT_EQ(wait_exit(pid), 0);
  return slurp(dir / "show.log");
}

// A sweep whose process was killed is stored `running` for good: show and list say that no
// process runs it (the sweep's lock is free) and how to go on; while it runs they do not. Its
// trainer's processes outlive it; the resume ends them.
TEST(StopSignals, AKilledSweepIsShownAsSuchAndItsResumeEndsWhatTheKilledRunLeft) {
  const fs::path dir = fresh_dir("sweep_killed_show");
  const fs::path sleeper = write_sweep(dir);
  const pid_t sweep = spawn_sweep({"run", (dir / "sweep.yaml").string()}, dir / "log");
  ASSERT_TRUE(wait_for_count(sleeper, 2, std::chrono::seconds(30))) << slurp(dir / "log");
  std::string shown = show(dir);
  EXPECT_NE(shown.find("sweep sig (running), metric"), std::string::npos) << shown;
  ASSERT_EQ(::kill(sweep, SIGKILL), 0);
  wait_exit(sweep);
  // The trainer's shell dies of SIGPIPE at its next line; until then the killed run left it and
  // its `sleep 0.2` too. Waiting for it leaves exactly the two sleepers for the resume to end.
  ASSERT_TRUE(wait_for_count(dir / "trainer.sh", 0, std::chrono::seconds(30)));
  shown = show(dir);
  EXPECT_NE(shown.find("sweep sig (running, but no process runs it), metric"), std::string::npos)
      << shown;
  EXPECT_NE(shown.find("sweep resume sig continues it"), std::string::npos) << shown;
  // SIGKILL leaves the trainer's processes (nothing of sweep's ran to end them). The resume ends
  // them before its own trial starts (they would train beside it, into its directory): once the
  // resume is stopped, none is left, the old ones included.
  EXPECT_EQ(processes_running(sleeper), 2);
  const pid_t resume =
      spawn_sweep({"resume", "sig", "--out", (dir / "runs").string()}, dir / "resume.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurp(dir / "resume.log").find("started") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(wait_for_count(sleeper, 2, std::chrono::seconds(30))) << slurp(dir / "resume.log");
  ASSERT_EQ(::kill(resume, SIGTERM), 0);
  EXPECT_EQ(wait_exit(resume), 143) << slurp(dir / "resume.log");
  EXPECT_TRUE(wait_for_count(sleeper, 0, std::chrono::seconds(5)))
      << processes_running(sleeper) << " left\n"
      << slurp(dir / "resume.log");
  EXPECT_NE(slurp(dir / "resume.log")
                .find("ended 2 processes of this sweep's external trainer that its killed run "
                      "had left running"),
            std::string::npos)
      << slurp(dir / "resume.log");
  for (const pid_t pid : processes_naming(dir.string())) ::kill(pid, SIGKILL);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::testing
