// Fused arrays through the run glue (resources.fuse: K on the CPU, where CI can run it): a fused
// sweep stores what the same sweep stores unfused (every metric of every trial, value for value;
// only the measured images/s differ), members stopped by a rule end alone, an interrupted fused
// sweep resumes (re-fused) to the numbers of one never interrupted, and fuse is read and checked.
#include "sweep/run/fused_arrays.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "common/metric_names.h"
#include "config_test_util.h"
#include "quiet_run.h"
#include "store/store.h"
#include "sweep/run/run_sweep.h"
#include "sweep/run/sweep_layout.h"
#include "sweep_process_util.h"
#include "trainer/model_file.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;

// 8 trials of one shape (learning rate x seed) and a batch size that splits them into two shapes.
const char* kFusible =
    "name: fused\n"
    "data: {dataset: synthetic, synthetic: {train_size: 192, test_size: 48, height: 8, width: 8}}\n"
    "model: {preset: mlp, hidden: [12]}\n"
    "training: {epochs: 3, batch_size: 32, log_every: 2, checkpoint: {every_epochs: 1}}\n"
    "sweep:\n  parameters:\n"
    "    training.learning_rate: {values: [0.01, 0.05, 0.1, 0.2]}\n"
    "    training.seed: {values: [1, 2]}\n"
    "resources: {cpu_slots: 1, cpu_threads: 1}\n";

// (trial number, metric name, step) -> value, without the measured speed.
using Metrics = std::map<std::tuple<std::int64_t, std::string, std::int64_t>, double>;

struct Stored {
  Metrics metrics;
  std::map<std::int64_t, TrialState> states;
  std::map<std::int64_t, std::string> logs;
};

Stored stored(const fs::path& db, const std::string& name) {
  const Store store(db, {.read_only = true});
  Stored out;
  for (const TrialRow& t : store.trials(store.find_sweep(name)->id)) {
    out.states[t.number] = t.state;
    std::ifstream log(db.parent_path() / t.log_path);
    out.logs[t.number] = std::string(std::istreambuf_iterator<char>(log), {});
    for (const MetricPoint& p : store.trial_metrics(t.id))
      if (p.name != metric_names::kImagesPerSecond)
        out.metrics[{t.number, p.name, p.step}] = p.value;
  }
  return out;
}

// Every trial of `config` as the run plans it.
std::vector<TrialPoint> points_of(const SweepConfig& config) {
  std::vector<TrialPoint> points;
  for (std::uint64_t i = 0; i < config.trial_count(); ++i) points.push_back(trial_point(config, i));
  return points;
}

run::RunResult run_quietly(const SweepConfig& config, const std::atomic<bool>* stop = nullptr) {
  std::ostringstream out;
  run::RunOptions options = sweep::testing::quiet_run_options(out, false);
  options.stop = stop;
  return run::run_sweep(config, options);
}

TEST(FusedSweep, StoresEveryMetricTheUnfusedSweepStores) {
  const fs::path dir = fresh_dir("sweep_fused_same");
  const SweepConfig fused = load_text(kFusible, {"output.dir=" + dir.string(), "resources.fuse=4"});
  const SweepConfig alone =
      load_text(kFusible, {"output.dir=" + dir.string(), "name=alone", "resources.fuse=off"});
  const run::RunResult a = run_quietly(fused), b = run_quietly(alone);
  ASSERT_EQ(a.exit_code(), 0);
  ASSERT_EQ(b.exit_code(), 0);
  const Stored x = stored(a.db_path, "fused"), y = stored(b.db_path, "alone");
  ASSERT_EQ(x.states.size(), 8u);
  EXPECT_EQ(x.states, y.states);
  ASSERT_FALSE(x.metrics.empty());
  EXPECT_EQ(x.metrics.size(), y.metrics.size());
  for (const auto& [key, value] : y.metrics) {
    const auto found = x.metrics.find(key);
    ASSERT_NE(found, x.metrics.end()) << std::get<1>(key) << " of trial " << std::get<0>(key);
    EXPECT_EQ(found->second, value) << std::get<1>(key) << " of trial " << std::get<0>(key);
  }
  for (const auto& [number, log] : x.logs)
    EXPECT_NE(log.find("trained in a fused array of 4 trials on cpu:0"), std::string::npos)
        << "trial " << number << ": " << log;
  for (const auto& [number, log] : y.logs)
    EXPECT_EQ(log.find("fused array"), std::string::npos) << log;
  // Each member wrote its trained network, the same one its lone run wrote.
  for (const auto& [number, state] : x.states) {
    const auto model = [&](const fs::path& db) {
      return trainer::read_model_file(
          run::model_in(run::trial_dir_in(db.parent_path(), number)).string());
    };
    const trainer::ModelFile f = model(a.db_path), g = model(b.db_path);
    EXPECT_FALSE(f.params.empty());
    EXPECT_EQ(f.params, g.params) << "trial " << number;
    EXPECT_EQ(f.trial, number);
  }
  fs::remove_all(dir);
}

TEST(FusedSweep, ShapesSplitArraysAndSlotsGetAnArrayEach) {
  const SweepConfig config = load_text(
      kFusible, {"resources.fuse=8",
                 "sweep.parameters={training.learning_rate: {values: [0.01, 0.1]}, "
                 "training.batch_size: {values: [16, 32]}, training.seed: {values: [1, 2]}}"});
  const std::vector<TrialPoint> points = points_of(config);
  // Grid order: lr slowest, seed fastest; batch 16 is trials 0, 1, 4, 5.
  run::FuseContext one{false, 1, false};
  auto arrays = run::fuse_trials(config, points, one);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(run::trial_numbers(points, arrays[0]), "0, 1, 4, 5");
  EXPECT_EQ(run::trial_numbers(points, arrays[1]), "2, 3, 6, 7");
  EXPECT_EQ(run::describe_fusion(config, arrays, one), "fused: 2 arrays of 4 trials");
  // Two slots: each shape is cut in two, so both slots train.
  run::FuseContext two{false, 2, false};
  arrays = run::fuse_trials(config, points, two);
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(run::trial_numbers(points, arrays[0]), "0, 1");
  // Ten of one shape at most four per array: three arrays as equal as can be.
  const SweepConfig ten = load_text(
      kFusible, {"resources.fuse=4",
                 "sweep.parameters={training.learning_rate: {values: [0.01, 0.02, 0.03, 0.04, "
                 "0.05]}, training.seed: {values: [1, 2]}}"});
  const std::vector<TrialPoint> ten_points = points_of(ten);
  const auto cut = run::fuse_trials(ten, ten_points, one);
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_EQ(run::trial_numbers(ten_points, cut[0]), "0-3");
  EXPECT_EQ(run::describe_fusion(ten, cut, one), "fused: 3 arrays (1 x 4 + 2 x 3 trials)");
  // auto fuses on GPUs only; off and MPI never.
  const SweepConfig automatic = load_text(kFusible);
  const std::vector<TrialPoint> eight = points_of(automatic);
  EXPECT_EQ(run::fuse_trials(automatic, eight, one).size(), eight.size());
  EXPECT_EQ(run::describe_fusion(automatic, {}, one),
            "fuse: auto fuses on GPUs; this machine trains on the CPU");
  EXPECT_EQ(run::fuse_trials(automatic, eight, run::FuseContext{true, 1, false}).size(), 1u);
  EXPECT_EQ(run::fuse_trials(config, points, run::FuseContext{true, 1, true}).size(),
            points.size());
}

TEST(FusedSweep, ARuleStopsMembersAloneAndTheArrayGoesOn) {
  const fs::path dir = fresh_dir("sweep_fused_rule");
  // The median rule from epoch 1: members below the median stop, the others train on.
  // Learning rates from good to hopeless, so that later members fall below the median.
  const SweepConfig config = load_text(
      kFusible, {"output.dir=" + dir.string(), "resources.fuse=8", "training.epochs=4",
                 "sweep.metric={name: val_loss, goal: minimize}",
                 "sweep.parameters={training.learning_rate: {values: [0.2, 0.1, 0.01, 0.001]}, "
                 "training.seed: {values: [1, 2]}}",
                 "sweep.early_terminate={type: median, min_epochs: 1, min_trials: 2}"});
  const run::RunResult result = run_quietly(config);
  ASSERT_EQ(result.exit_code(), 0);
  const Stored s = stored(result.db_path, "fused");
  int stopped = 0, completed = 0;
  for (const auto& [number, state] : s.states) {
    stopped += state == TrialState::stopped_early;
    completed += state == TrialState::completed;
  }
  EXPECT_GT(stopped, 0);
  EXPECT_GT(completed, 0);
  EXPECT_EQ(stopped + completed, 8);
  fs::remove_all(dir);
}

TEST(FusedSweep, AnInterruptedFusedSweepResumesToTheNumbersOfOneNeverInterrupted) {
  const fs::path dir = fresh_dir("sweep_fused_resume");
  const SweepConfig fused =
      load_text(kFusible, {"output.dir=" + dir.string(), "resources.fuse=8", "training.epochs=4"});
  // Stop once any trial has stored its first epoch's validation.
  std::atomic<bool> stop{false}, done{false};
  std::thread watcher([&] {
    const fs::path db = dir / "fused" / "sweep.db";
    while (!done && !stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!fs::exists(db)) continue;
      try {
        const Store store(db, {.read_only = true});
        const auto sweep = store.find_sweep("fused");
        if (!sweep) continue;
        for (const MetricPoint& p : store.latest_metrics(sweep->id))
          if (p.name == "val_loss" && p.epoch >= 1) stop = true;
      } catch (const std::exception&) {
      }
    }
  });
  const run::RunResult first = run_quietly(fused, &stop);
  done = true;
  watcher.join();
  run::ResumeOptions resume;
  resume.out_dir = dir.string();
  resume.run.out = nullptr;
  std::ostringstream out;
  resume.run.out = &out;
  resume.run.handle_sigint = false;
  resume.run.write_report = false;
  const run::RunResult rest = run::resume_sweep("fused", resume);
  ASSERT_EQ(rest.exit_code(), 0) << out.str();
  const SweepConfig alone = load_text(kFusible, {"output.dir=" + dir.string(), "name=alone",
                                                 "resources.fuse=off", "training.epochs=4"});
  const run::RunResult straight = run_quietly(alone);
  const Stored x = stored(first.db_path, "fused"), y = stored(straight.db_path, "alone");
  for (const auto& [number, state] : x.states) EXPECT_EQ(state, TrialState::completed);
  for (const auto& [key, value] : y.metrics) {
    if (std::get<1>(key) == "loss") continue;  // a mid-epoch log line may repeat after resume
    const auto found = x.metrics.find(key);
    ASSERT_NE(found, x.metrics.end()) << std::get<1>(key) << " of trial " << std::get<0>(key);
    EXPECT_EQ(found->second, value) << std::get<1>(key) << " of trial " << std::get<0>(key);
  }
  fs::remove_all(dir);
}

TEST(FusedSweep, FuseIsReadAndChecked) {
  EXPECT_EQ(load_text(kFusible).resources.fuse, ResourcesSpec::kFuseAuto);
  EXPECT_EQ(load_text(kFusible, {"resources.fuse=off"}).resources.fuse, 0);
  EXPECT_EQ(load_text(kFusible, {"resources.fuse=16"}).resources.fuse, 16);
  for (const char* bad :
       {"resources.fuse=0", "resources.fuse=fast", "resources.fuse=2.5", "resources.fuse=[4]"}) {
    const std::vector<std::string> lines = problems(kFusible, {bad});
    ASSERT_EQ(lines.size(), 1u) << bad;
    EXPECT_NE(lines[0].find("key 'resources.fuse': expected auto, off, or the most trials per "
                            "fused array"),
              std::string::npos)
        << lines[0];
  }
}

}  // namespace
}  // namespace sweep::config::testing
