// A tpe sweep through the run loop: trials made one at a time as slots free (ask), every result
// told back (tell), stored like any sweep's; resume reloads the finished trials into the model and
// goes on without repeating a point; the built-in trainer runs tpe's values.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "common/format.h"
#include "config_test_util.h"
#include "quiet_run.h"
#include "store/store.h"
#include "sweep/config/yaml_tree.h"
#include "sweep/run/run_sweep.h"
#include "sweep_process_util.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;

// loss = (x - 0.5)^2, + 1 unless y is b: the minimum is x = 0.5, y = b.
std::string objective_sweep(const fs::path& dir, int max_trials) {
  const fs::path script = dir / "objective.py";
  std::ofstream(script) << "import json, sys\n"
                           "x, y = float(sys.argv[1]), sys.argv[2]\n"
                           "loss = (x - 0.5) ** 2 + (0.0 if y == 'b' else 1.0)\n"
                           "print(json.dumps({'step': 1, 'epoch': 1, 'loss': loss}))\n";
  return "name: tpe-quad\n"
         "trainer: {command: \"python3 " +
         script.string() +
         " {x} {y}\"}\n"
         "sweep:\n"
         "  method: tpe\n"
         "  max_trials: " +
         std::to_string(max_trials) +
         "\n"
         "  seed: 3\n"
         "  metric: {name: loss, goal: minimize}\n"
         "  parameters:\n"
         "    x: {min: -2.0, max: 2.0}\n"
         "    y: {values: [a, b, c]}\n"
         "resources: {cpu_slots: 2}\n"
         "output: {dir: " +
         dir.string() + "}\n";
}

run::RunOptions quiet(std::ostream& out) { return sweep::testing::quiet_run_options(out, false); }

// The trials of sweep `name` (default: the objective sweep's) in the database `db`, by number.
std::vector<TrialRow> rows_of(const fs::path& db, const std::string& name = "tpe-quad") {
  StoreOptions read_only;
  read_only.read_only = true;
  const Store store(db, read_only);
  return store.trials(store.find_sweep(name)->id);
}

TEST(TpeSweep, MakesEachTrialWhenASlotFreesAndLearnsFromTheResults) {
  const fs::path dir = fresh_dir("sweep_tpe_run");
  const SweepConfig config = load_text(objective_sweep(dir, 24));
  EXPECT_EQ(config.trial_count(), 24u);
  std::ostringstream out;
  const run::RunResult result = run::run_sweep(config, quiet(out));
  ASSERT_EQ(result.exit_code(), 0) << out.str();
  EXPECT_EQ(result.states.at(TrialState::completed), 24) << out.str();
  const std::vector<TrialRow> rows = rows_of(result.db_path);
  ASSERT_EQ(rows.size(), 24u);
  std::set<std::string> points;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].number, static_cast<std::int64_t>(i));
    const double x = rows[i].params.at("x").get<double>();
    EXPECT_GE(x, -2.0);
    EXPECT_LE(x, 2.0);
    points.insert(rows[i].params.dump());
  }
  EXPECT_EQ(points.size(), rows.size()) << "a point was suggested twice";
  // The start-up trials are random search's draws, which is what --dry-run lists.
  for (std::uint64_t i = 0; i < 10; ++i)
    EXPECT_EQ(rows[i].params, trial_point(config, i).params) << "trial " << i;
  // 24 trials find the corner a random draw hits with probability ~1/3 per trial and the bowl's
  // bottom: the best is y = b and x near 0.5.
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->trial.params.at("y"), "b");
  EXPECT_LT(result.best->value, 0.05) << result.best->trial.params.dump();
  EXPECT_NE(out.str().find("24 trials (tpe: each made when a slot frees)"), std::string::npos)
      << out.str();
  fs::remove_all(dir);
}

TEST(TpeSweep, ResumeReloadsTheFinishedTrialsAndGoesOnWithoutRepeatingAPoint) {
  const fs::path dir = fresh_dir("sweep_tpe_resume");
  const SweepConfig config = load_text(objective_sweep(dir, 16));
  // Stop the first run once six trials have finished.
  std::atomic<bool> stop{false}, watching{true};
  const fs::path db = dir / "tpe-quad" / "sweep.db";
  std::thread watcher([&] {
    while (watching && !stop) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!fs::exists(db)) continue;
      try {
        int finished = 0;
        for (const TrialRow& row : rows_of(db)) finished += row.state == TrialState::completed;
        if (finished >= 6) stop = true;
      } catch (const std::exception&) {  // the sweep's row is not there yet
      }
    }
  });
  std::ostringstream out;
  run::RunOptions options = quiet(out);
  options.stop = &stop;
  options.stop_reason = "test stop";
  const run::RunResult first = run::run_sweep(config, options);
  watching = false;
  watcher.join();
  ASSERT_TRUE(first.interrupted) << out.str();
  const std::vector<TrialRow> before = rows_of(db);
  ASSERT_LT(before.size(), 16u) << "the sweep finished before the stop";
  std::map<std::int64_t, std::string> finished_points;
  for (const TrialRow& row : before)
    if (row.state == TrialState::completed) finished_points[row.number] = row.params.dump();
  ASSERT_GE(finished_points.size(), 6u);

  run::ResumeOptions resume;
  resume.out_dir = dir.string();
  resume.run = quiet(out);
  const run::RunResult second = run::resume_sweep("tpe-quad", resume);
  ASSERT_EQ(second.exit_code(), 0) << out.str();
  const std::vector<TrialRow> after = rows_of(db);
  ASSERT_EQ(after.size(), 16u);
  std::set<std::string> points;
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].number, static_cast<std::int64_t>(i));
    EXPECT_EQ(after[i].state, TrialState::completed);
    points.insert(after[i].params.dump());
    if (finished_points.count(after[i].number)) {  // finished trials are kept as they were
      EXPECT_EQ(after[i].params.dump(), finished_points[after[i].number]);
    }
  }
  EXPECT_EQ(points.size(), after.size()) << "resume repeated a point";
  fs::remove_all(dir);
}

// With ASHA, trials stopped early are told to the model as pruned at the depth they reached; the
// sweep still makes exactly max_trials distinct trials and ends.
TEST(TpeSweep, EarlyStoppedTrialsAreToldAndTheSweepGoesOn) {
  const fs::path dir = fresh_dir("sweep_tpe_asha");
  const fs::path script = dir / "curve.py";
  std::ofstream(script) << "import json, sys, time\n"
                           "x = float(sys.argv[1])\n"
                           "for epoch in range(1, 5):\n"
                           "    loss = (x - 0.5) ** 2 + 1.0 / epoch\n"
                           "    print(json.dumps({'step': epoch, 'epoch': epoch, 'loss': loss}),\n"
                           "          flush=True)\n"
                           "    time.sleep(0.02)\n";
  const SweepConfig config = load_text(
      "name: tpe-asha\n"
      "trainer: {command: \"python3 " +
      script.string() +
      " {x}\"}\n"
      "sweep:\n"
      "  method: tpe\n"
      "  max_trials: 14\n"
      "  metric: {name: loss, goal: minimize}\n"
      "  parameters: {x: {min: -2.0, max: 2.0}}\n"
      "  early_terminate: {type: asha, min_epochs: 1, eta: 2}\n"
      "resources: {cpu_slots: 1}\n"
      "output: {dir: " +
      dir.string() + "}\n");
  std::ostringstream out;
  const run::RunResult result = run::run_sweep(config, quiet(out));
  ASSERT_EQ(result.exit_code(), 0) << out.str();
  const std::vector<TrialRow> rows = rows_of(result.db_path, "tpe-asha");
  ASSERT_EQ(rows.size(), 14u);
  std::set<std::string> points;
  int stopped = 0;
  for (const TrialRow& row : rows) {
    points.insert(row.params.dump());
    stopped += row.state == TrialState::stopped_early;
    EXPECT_TRUE(row.state == TrialState::completed || row.state == TrialState::stopped_early)
        << "trial " << row.number << ": " << to_string(row.state);
  }
  EXPECT_EQ(points.size(), rows.size());
  EXPECT_GT(stopped, 0) << out.str();  // one slot: ASHA's decisions are exact, and some are stops
  fs::remove_all(dir);
}

// A reached metric.target ends a tpe sweep as it ends a grid: no trial is made after it, and
// `sweep resume` finds nothing left to run.
TEST(TpeSweep, AReachedTargetEndsTheSweepAndResumeMakesNoMoreTrials) {
  const fs::path dir = fresh_dir("sweep_tpe_target");
  std::string yaml = objective_sweep(dir, 60);
  yaml.replace(yaml.find("goal: minimize}"), 15, "goal: minimize, target: 0.3}");
  const SweepConfig config = load_text(yaml);
  std::ostringstream out;
  const run::RunResult first = run::run_sweep(config, quiet(out));
  ASSERT_FALSE(first.target_reached_by.empty()) << out.str();
  const std::size_t made = rows_of(first.db_path).size();
  EXPECT_LT(made, 60u);
  run::ResumeOptions resume;
  resume.out_dir = dir.string();
  resume.run = quiet(out);
  EXPECT_EQ(run::resume_sweep("tpe-quad", resume).trials_run, 0) << out.str();
  EXPECT_EQ(rows_of(first.db_path).size(), made);
  fs::remove_all(dir);
}

TEST(TpeSweep, TheBuiltInTrainerTrainsWithTheSuggestedValues) {
  const fs::path dir = fresh_dir("sweep_tpe_trainer");
  const SweepConfig config = load_text(
      "name: tpe-tiny\n"
      "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32, height: 8, width: "
      "8}}\n"
      "model: {preset: mlp, hidden: [8]}\n"
      "training: {epochs: 1, batch_size: 16}\n"
      "sweep:\n  method: bayes\n  max_trials: 3\n  parameters:\n"
      "    learning_rate: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
      "resources: {cpu_slots: 1, cpu_threads: 1}\n",
      {"output.dir=" + dir.string()});
  EXPECT_EQ(config.sweep.method, "tpe");
  std::ostringstream out;
  const run::RunResult result = run::run_sweep(config, quiet(out));
  ASSERT_EQ(result.exit_code(), 0) << out.str();
  const std::vector<TrialRow> rows = rows_of(result.db_path, "tpe-tiny");
  ASSERT_EQ(rows.size(), 3u);
  for (const TrialRow& row : rows) {
    EXPECT_EQ(row.state, TrialState::completed);
    const double lr = row.params.at("training.learning_rate").get<double>();
    EXPECT_GE(lr, 0.001);
    EXPECT_LE(lr, 0.1);
    // The trial trained with its value: the resolved config stored with it says so.
    EXPECT_NE(row.config_yaml.find("learning_rate: " + format_number(lr)), std::string::npos)
        << row.config_yaml;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::config::testing
