// The files sweep writes on its own in a sweep's directory (.lock, trials/NNN/log.txt,
// report.html) are never reached through a symbolic link planted there: the real binary refuses
// with a message naming the link, and the link's target is left as it was. An oversized
// checkpoint is refused from its header, before it is read.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "store/store.h"
#include "sweep/run/sweep_layout.h"
#include "sweep_process_util.h"

namespace sweep {
namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;
using sweep::testing::slurp;
using sweep::testing::spawn_sweep;

const char* kTwoTrials =
    "name: own\n"
    "data: {dataset: synthetic, synthetic: {train_size: 128, test_size: 32, height: 8, width: 8}}\n"
    "model: {preset: mlp, hidden: [8]}\n"
    "training: {epochs: 1, batch_size: 16, checkpoint: {every_epochs: 1}}\n"
    "sweep:\n  parameters:\n"
    "    training.learning_rate: {values: [0.01, 0.1]}\n"
    "resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}\n";

constexpr const char* kVictim = "not sweep's\n";

// What a finished child used: its exit code (-1 for a signal), seconds and peak memory.
struct Finished {
  int exit_code = -1;
  double seconds = 0;
  long max_rss_kib = 0;
};

class OwnFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_dir("sweep_own_files");
    log_ = dir_ / "sweep.log";
    std::ofstream(dir_ / "own.yaml") << kTwoTrials;
    std::ofstream(dir_ / "victim.txt") << kVictim;
    ASSERT_EQ(sweep({"run", (dir_ / "own.yaml").string(), "--out", dir_.string()}).exit_code, 0)
        << slurp(log_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Finished sweep(const std::vector<std::string>& args) {
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = spawn_sweep(args, log_);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    Finished done;
    done.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    done.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    done.max_rss_kib = usage.ru_maxrss;
    return done;
  }
  Finished resume() { return sweep({"resume", run_dir().string() + "/"}); }

  fs::path run_dir() const { return dir_ / "own"; }
  fs::path trial_dir(int number) const { return run::trial_dir_in(run_dir(), number); }
  fs::path victim() const { return dir_ / "victim.txt"; }
  // `path` replaced by a symbolic link to the victim.
  void plant_link(const fs::path& path) const {
    fs::remove(path);
    fs::create_symlink(victim(), path);
  }
  // The completed trial set back to `interrupted`, as a run stopped during it leaves it.
  void interrupt(int number) const {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((run_dir() / "sweep.db").c_str(), &db), SQLITE_OK);
    const std::string sql =
        "UPDATE trials SET state = 'interrupted' WHERE number = " + std::to_string(number);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  TrialRow trial(int number) const {
    const Store store(run_dir() / "sweep.db", {.read_only = true});
    return *store.trial_by_number(store.find_sweep("own")->id, number);
  }
  static std::string refusal(const fs::path& path) {
    return path.string() +
           " is a symbolic link: sweep writes its own files only as regular files; remove the link";
  }

  fs::path dir_;
  fs::path log_;  // the last command's output
};

TEST_F(OwnFiles, ALockThatIsASymbolicLinkIsRefusedAndItsTargetKept) {
  plant_link(run_dir() / ".lock");
  interrupt(1);
  EXPECT_NE(resume().exit_code, 0) << slurp(log_);
  EXPECT_NE(slurp(log_).find(refusal(run_dir() / ".lock")), std::string::npos) << slurp(log_);
  EXPECT_EQ(slurp(victim()), kVictim) << "the lock's holder line went through the link";
  EXPECT_EQ(trial(1).state, TrialState::interrupted) << "nothing ran without the lock";
}

TEST_F(OwnFiles, ATrialLogOrAReportThatIsASymbolicLinkIsNeverWrittenThrough) {
  plant_link(run::log_in(trial_dir(0)));
  plant_link(run_dir() / "report.html");
  interrupt(0);
  resume();
  EXPECT_EQ(slurp(victim()), kVictim) << "a log line or the report went through a link";
  const TrialRow zero = trial(0);
  EXPECT_EQ(zero.state, TrialState::failed);
  EXPECT_NE(zero.error.find(refusal(run::log_in(trial_dir(0)))), std::string::npos) << zero.error;
  EXPECT_NE(slurp(log_).find(refusal(run_dir() / "report.html")), std::string::npos) << slurp(log_);

  // `sweep report NAME` writes the sweep's own report.html the same way; a path the user names
  // with -o is written through its link, as a shell's `>` would.
  EXPECT_NE(sweep({"report", run_dir().string() + "/"}).exit_code, 0) << slurp(log_);
  EXPECT_NE(slurp(log_).find(refusal(run_dir() / "report.html")), std::string::npos) << slurp(log_);
  EXPECT_EQ(slurp(victim()), kVictim);
  const fs::path named = dir_ / "named.html";
  fs::create_symlink(victim(), named);
  EXPECT_EQ(sweep({"report", run_dir().string() + "/", "-o", named.string()}).exit_code, 0)
      << slurp(log_);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(named)));
  EXPECT_NE(slurp(victim()).find("<html"), std::string::npos);
}

TEST_F(OwnFiles, AnOversizedCheckpointIsRefusedBeforeItIsRead) {
  const fs::path checkpoint = run::checkpoint_in(trial_dir(0));
  const auto size = fs::file_size(checkpoint);
  fs::resize_file(checkpoint, std::uintmax_t(20) << 30);  // sparse: no disk is used
  interrupt(0);
  const Finished resumed = resume();
  const TrialRow zero = trial(0);
  EXPECT_EQ(zero.state, TrialState::failed);
  EXPECT_NE(zero.error.find("expected " + std::to_string(size) + " bytes, got " +
                            std::to_string(std::uintmax_t(20) << 30)),
            std::string::npos)
      << zero.error;
  // Reading it whole would take 20 GiB; its header alone is a few kilobytes.
  EXPECT_LT(resumed.max_rss_kib, 1 << 20) << "KiB at the peak";
  EXPECT_LT(resumed.seconds, 30.0);
}

}  // namespace
}  // namespace sweep
