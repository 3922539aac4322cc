// `ulimit -f` as a careless user meets it: the sweep does not die by SIGXFSZ mid-write; it says
// which file could not be written and why, exits 1, starts no further trial, leaves a store that
// passes integrity_check, and `sweep resume` finishes the sweep once the limit is lifted.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "store/store.h"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(FileSizeLimit, ASweepThatHitsUlimitFStopsCleanlyAndResumes) {
  const fs::path dir = fs::temp_directory_path() / ("sweep_ulimit_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "limited.yaml")
      << "name: limited\n"
         "data: {dataset: synthetic, synthetic: {train_size: 512, test_size: 128}}\n"
         "model: {preset: mlp, hidden: [64]}\n"
         "training: {epochs: 3, batch_size: 32, log_every: 1, checkpoint: {every_epochs: 1}}\n"
         "sweep:\n  parameters:\n"
         "    training.learning_rate: {values: [0.01, 0.02, 0.03, 0.04, 0.05, 0.06]}\n"
         "resources: {execution: cpu}\n";
  const std::string sweep = SWEEP_BINARY;
  // 400 blocks of 512 bytes (sh's ulimit -f unit): room for the first trial, not for all six.
  const int code = shell("cd " + dir.string() + " && ulimit -f 400 && " + sweep +
                         " run limited.yaml >out.txt 2>err.txt");
  const std::string err = slurp(dir / "err.txt"), out = slurp(dir / "out.txt");
  EXPECT_EQ(code, 1) << "not killed by SIGXFSZ (153), not a crash\n" << out << err;
  EXPECT_NE(err.find("cannot write runs/limited/sweep.db: this process has a file-size limit "
                     "(ulimit -f)"),
            std::string::npos)
      << err;
  EXPECT_NE(out.find("no further trial starts"), std::string::npos) << out;
  EXPECT_EQ(err.find(".cpp"), std::string::npos) << err;

  const fs::path db = dir / "runs" / "limited" / "sweep.db";
  {
    sweep::Store store(db, {.read_only = true});
    const auto found = store.find_sweep("limited");
    ASSERT_TRUE(found.has_value());
    int completed = 0;
    for (const auto& t : store.trials(found->id))
      completed += t.state == sweep::TrialState::completed;
    EXPECT_LT(completed, 6) << "the limit should have stopped the sweep early";
  }
  EXPECT_EQ(shell("sqlite3 " + db.string() + " 'PRAGMA integrity_check' | grep -qx ok"), 0);

  const int resumed = shell("cd " + dir.string() + " && " + sweep +
                            " resume limited --retry-failed >resume.txt 2>&1");
  EXPECT_EQ(resumed, 0) << slurp(dir / "resume.txt");
  sweep::Store store(db, {.read_only = true});
  for (const auto& t : store.trials(store.find_sweep("limited")->id))
    EXPECT_EQ(t.state, sweep::TrialState::completed) << "trial " << t.number << ": " << t.error;
  fs::remove_all(dir);
}

}  // namespace
