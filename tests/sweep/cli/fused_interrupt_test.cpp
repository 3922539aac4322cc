// Ctrl-C on a fused sweep, as a user does it: `sweep run` trains four trials as one array (fuse: 4
// on the CPU), gets a real SIGINT while they train, and every member checkpoints and ends
// `interrupted` (exit 130); `sweep resume` fuses them again, each continues from its own
// checkpoint, and all four end completed, none trained from the start twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/store.h"
#include "sweep_process_util.h"

namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;
using sweep::testing::slurp;
using sweep::testing::spawn_sweep;
using sweep::testing::wait_exit;

// True once every one of `count` trials of `name` is running and has reported a metric.
bool all_training(const fs::path& db, const std::string& name, std::size_t count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(db)) continue;
    try {
      const sweep::Store store(db, {.read_only = true});
      const auto sweep = store.find_sweep(name);
      if (!sweep) continue;
      std::size_t training = 0;
      for (const auto& t : store.trials(sweep->id))
        training += t.state == sweep::TrialState::running && !store.trial_metrics(t.id).empty();
      if (training == count) return true;
    } catch (const sweep::Error&) {
      // being created
    }
  }
  return false;
}

TEST(FusedInterrupt, CtrlCCheckpointsEveryMemberAndResumeFusesThemAgain) {
  const fs::path dir = fresh_dir("sweep_fused_ctrl_c");
  const fs::path config = dir / "fused.yaml";
  std::ofstream(config)
      << "name: fused\n"
         "data: {dataset: synthetic, synthetic: {train_size: 2000, test_size: 200}}\n"
         "model: {preset: mlp, hidden: [128]}\n"
         "training: {batch_size: 32, log_every: 5, epochs: 12}\n"
         "sweep:\n  parameters:\n"
         "    training.learning_rate: {values: [0.01, 0.02]}\n"
         "    training.seed: {values: [1, 2]}\n"
         "resources: {cpu_slots: 1, cpu_threads: 1, fuse: 4}\n"
         "output: {dir: "
      << dir.string() << "}\n";
  const fs::path db = dir / "fused" / "sweep.db";
  const pid_t run = spawn_sweep({"run", config.string()}, dir / "run.log");
  ASSERT_TRUE(all_training(db, "fused", 4)) << slurp(dir / "run.log");
  ASSERT_EQ(::kill(run, SIGINT), 0);
  ASSERT_EQ(wait_exit(run), 130) << slurp(dir / "run.log");
  {
    const sweep::Store store(db, {.read_only = true});
    for (const auto& t : store.trials(store.find_sweep("fused")->id)) {
      EXPECT_EQ(t.state, sweep::TrialState::interrupted) << "trial " << t.number;
      EXPECT_TRUE(fs::exists(dir / "fused" / t.checkpoint_path)) << "trial " << t.number;
    }
  }
  // Named by its directory, as a shell completes it (sweep_argument.h).
  const pid_t resumed = spawn_sweep({"resume", (dir / "fused").string() + "/"}, dir / "resume.log");
  ASSERT_EQ(wait_exit(resumed), 0) << slurp(dir / "resume.log");
  const sweep::Store store(db, {.read_only = true});
  for (const auto& t : store.trials(store.find_sweep("fused")->id)) {
    EXPECT_EQ(t.state, sweep::TrialState::completed) << "trial " << t.number;
    const std::string log = slurp(dir / "fused" / t.log_path);
    // Fused when it ran, fused again when resumed, and resumed from its own checkpoint.
    std::size_t fused = 0;
    for (auto at = log.find("trained in a fused array of 4"); at != std::string::npos;
         at = log.find("trained in a fused array of 4", at + 1))
      ++fused;
    EXPECT_EQ(fused, 2u) << log;
    EXPECT_NE(log.find("resuming from"), std::string::npos) << log;
  }
  fs::remove_all(dir);
}

}  // namespace
