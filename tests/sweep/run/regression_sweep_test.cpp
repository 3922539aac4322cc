// A regression sweep through the config and the run glue: the regression metrics are accepted
// as sweep.metric with their goals (rmse / mae minimized, r2 maximized), and a tiny grid on the
// synthetic regression set stores val_rmse / val_mae / val_r2 per trial, no accuracy, and picks
// the best trial by val_rmse.
#include <filesystem>
#include <sstream>

#include "common/json.h"
#include "config_test_util.h"
#include "quiet_run.h"
#include "store/store.h"
#include "sweep/run/run_sweep.h"
#include "sweep_process_util.h"

namespace sweep::config::testing {
namespace {

namespace fs = std::filesystem;
using sweep::testing::fresh_dir;

const char* kRegressionGrid =
    "name: regress\n"
    "data: {dataset: synthetic, task: regression,\n"
    "       synthetic: {train_size: 256, test_size: 64, channels: 4, height: 2, width: 1}}\n"
    "model: {preset: mlp, hidden: [16]}\n"
    "training: {epochs: 3, batch_size: 32}\n"
    "sweep:\n"
    "  metric: {name: val_rmse}\n"
    "  parameters:\n"
    "    training.learning_rate: {values: [0.001, 0.05]}\n"
    "resources: {cpu_slots: 2, cpu_threads: 1}\n";

TEST(RegressionConfig, MetricGoalsFollowTheirNames) {
  EXPECT_EQ(load_text(kRegressionGrid).sweep.metric.goal, "minimize");
  EXPECT_EQ(load_text(kRegressionGrid, {"sweep.metric.name=val_mae"}).sweep.metric.goal,
            "minimize");
  EXPECT_EQ(load_text(kRegressionGrid, {"sweep.metric.name=val_r2"}).sweep.metric.goal, "maximize");
  EXPECT_EQ(load_text(kRegressionGrid, {"sweep.metric.name=train_mae"}).sweep.metric.goal,
            "minimize");
}

// An accuracy, named or the default, is no regression's metric: refused before anything runs.
TEST(RegressionConfig, AnAccuracyMetricIsRefused) {
  const auto named_problems = problems(kRegressionGrid, {"sweep.metric.name=val_accuracy"});
  ASSERT_EQ(named_problems.size(), 1u);
  EXPECT_NE(named_problems[0].find("key 'sweep.metric.name': the data is a regression set"),
            std::string::npos)
      << named_problems[0];
  std::string no_metric = kRegressionGrid;
  no_metric.replace(no_metric.find("  metric: {name: val_rmse}\n"),
                    std::string("  metric: {name: val_rmse}\n").size(), "");
  const auto default_problems = problems(no_metric);
  ASSERT_EQ(default_problems.size(), 1u);
  EXPECT_NE(default_problems[0].find("not val_accuracy (the default metric): name one"),
            std::string::npos)
      << default_problems[0];
}

TEST(RegressionSweep, TrialsReportRegressionMetricsAndTheBestIsTheLowestRmse) {
  const fs::path dir = fresh_dir("sweep_regression");
  const SweepConfig config = load_text(kRegressionGrid, {"output.dir=" + dir.string()});
  std::ostringstream out;
  const run::RunResult result = run::run_sweep(config, sweep::testing::quiet_run_options(out));
  ASSERT_EQ(result.exit_code(), 0) << out.str();
  ASSERT_TRUE(result.best.has_value());

  const Store store(result.db_path, {.read_only = true});
  const auto sweep = store.find_sweep("regress");
  ASSERT_TRUE(sweep.has_value());
  const auto trials = store.trials(sweep->id);
  ASSERT_EQ(trials.size(), 2u);
  double lowest = 1e300;
  for (const TrialRow& t : trials) {
    EXPECT_EQ(t.state, TrialState::completed);
    EXPECT_FALSE(t.summary.contains("confusion")) << t.summary.dump();
    EXPECT_TRUE(t.summary.contains("final_val_rmse")) << t.summary.dump();
    bool rmse = false, mae = false, r2 = false, accuracy = false;
    double last_rmse = 0;
    for (const MetricPoint& p : store.trial_metrics(t.id)) {
      rmse = rmse || p.name == "val_rmse";
      mae = mae || p.name == "val_mae";
      r2 = r2 || p.name == "val_r2";
      accuracy = accuracy || p.name == "val_accuracy" || p.name == "train_accuracy";
      if (p.name == "val_rmse" && p.epoch == 3.0) last_rmse = p.value;
    }
    EXPECT_TRUE(rmse && mae && r2) << "trial " << t.number;
    EXPECT_FALSE(accuracy) << "trial " << t.number;
    lowest = std::min(lowest, last_rmse);
  }
  EXPECT_LE(result.best->value, lowest + 1e-12);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sweep::config::testing
