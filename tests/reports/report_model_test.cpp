// The numbers the report shows: best trial, swept parameters, heatmap cells, downsampling.
#include "reports/report_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/json.h"
#include "reports/report_payload.h"
#include "tests/reports/synthetic_sweep.h"

namespace sweep::reports {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TrialData trial(std::int64_t number, sweep::Json params, std::vector<double> metric_by_epoch,
                TrialState state = TrialState::completed) {
  TrialData t;
  t.id = 100 + number;
  t.number = number;
  t.state = state;
  t.params = std::move(params);
  for (std::size_t e = 0; e < metric_by_epoch.size(); ++e)
    t.series["val_accuracy"].push_back(
        {static_cast<std::int64_t>(e + 1), static_cast<double>(e + 1), metric_by_epoch[e]});
  return t;
}

TEST(ReportModel, BestTrialMaximizeTakesThePeakNotTheFinalValue) {
  ReportData d;
  d.trials.push_back(trial(0, {{"lr", 0.1}}, {0.5, 0.7, 0.72}));
  d.trials.push_back(trial(1, {{"lr", 0.01}}, {0.6, 0.9, 0.6}));  // peaked, then overfit
  d.trials.push_back(trial(2, {{"lr", 0.001}}, {0.3, 0.4, 0.85}));
  const auto scores = score_trials(d);
  ASSERT_TRUE(scores[1].best);
  EXPECT_DOUBLE_EQ(*scores[1].best, 0.9);
  EXPECT_EQ(scores[1].best_step, 2);
  EXPECT_DOUBLE_EQ(*scores[1].last, 0.6);
  EXPECT_EQ(best_trial_index(d, scores), 1u);
}

TEST(ReportModel, BestTrialMinimizeTakesTheLowest) {
  ReportData d;
  d.metric_name = "val_loss";
  d.goal = Goal::minimize;
  for (auto [n, values] : std::vector<std::pair<int, std::vector<double>>>{
           {0, {0.9, 0.5}}, {1, {0.8, 0.3, 0.35}}, {2, {0.7, 0.6}}}) {
    TrialData t = trial(n, {{"lr", n}}, {});
    for (std::size_t e = 0; e < values.size(); ++e)
      t.series["val_loss"].push_back({static_cast<std::int64_t>(e + 1), e + 1.0, values[e]});
    d.trials.push_back(t);
  }
  const auto scores = score_trials(d);
  EXPECT_EQ(best_trial_index(d, scores), 1u);
  EXPECT_DOUBLE_EQ(*scores[1].best, 0.3);
}

TEST(ReportModel, TiesGoToTheEarlierStepThenTheLowerNumber) {
  ReportData d;
  d.trials.push_back(trial(0, {{"lr", 1}}, {0.1, 0.8}));  // 0.8 at step 2
  d.trials.push_back(trial(1, {{"lr", 2}}, {0.8, 0.8}));  // 0.8 at step 1: wins
  d.trials.push_back(trial(2, {{"lr", 3}}, {0.8}));       // 0.8 at step 1, higher number
  EXPECT_EQ(best_trial_index(d, score_trials(d)), 1u);
}

// Store::best_trial's rule: failed and diverged trials rank below every other.
TEST(ReportModel, FailedAndDivergedTrialsRankLast) {
  ReportData d;
  d.trials.push_back(trial(0, {{"lr", 1}}, {0.96}, TrialState::diverged));
  d.trials.push_back(trial(1, {{"lr", 2}}, {0.6}));
  d.trials.push_back(trial(2, {{"lr", 3}}, {0.97}, TrialState::failed));
  EXPECT_EQ(best_trial_index(d, score_trials(d)), 1u);
  d.trials[1].state = TrialState::failed;
  EXPECT_EQ(best_trial_index(d, score_trials(d)), 2u);  // all broken: the best value
}

TEST(ReportModel, NonFiniteValuesNeverWinAndNaNOnlyTrialsHaveNoScore) {
  ReportData d;
  d.trials.push_back(trial(0, {{"lr", 1}}, {0.5, kInf, 0.6}));
  d.trials.push_back(trial(1, {{"lr", 2}}, {kNaN, kNaN}, TrialState::diverged));
  const auto scores = score_trials(d);
  EXPECT_DOUBLE_EQ(*scores[0].best, 0.6);
  EXPECT_FALSE(scores[1].best);
  EXPECT_TRUE(std::isnan(*scores[1].last));
  EXPECT_EQ(best_trial_index(d, scores), 0u);

  ReportData only_nan;
  only_nan.trials.push_back(trial(0, {{"lr", 1}}, {kNaN}, TrialState::diverged));
  EXPECT_FALSE(best_trial_index(only_nan, score_trials(only_nan)));
}

// A summary is no series: a trial whose metric is only in its summary has no score, as
// Store::best_trial (and so `sweep best`) gives it none; the trial with a series wins.
TEST(ReportModel, TrialWithoutSeriesHasNoScoreWhateverItsSummarySays) {
  ReportData d;
  TrialData t = trial(0, {{"lr", 1}}, {});
  t.summary = {{"best", {{"val_accuracy", 0.77}}},
               {"final", {{"val_accuracy", 0.75}}},
               {"val_accuracy", 0.77}};
  d.trials.push_back(t);
  d.trials.push_back(trial(1, {{"lr", 2}}, {0.5}));
  const auto scores = score_trials(d);
  EXPECT_FALSE(scores[0].best);
  EXPECT_FALSE(scores[0].last);
  EXPECT_EQ(best_trial_index(d, scores), 1u);
}

TEST(ReportModel, EmptySweepHasNothingAndDoesNotThrow) {
  ReportData d;
  const ReportModel m = analyze(d);
  EXPECT_FALSE(m.best);
  EXPECT_TRUE(m.swept.empty());
  EXPECT_FALSE(m.axes.x);
  EXPECT_TRUE(m.cells.empty());
}

TEST(ReportModel, SweptParametersAreThoseWithSeveralValuesComparedAsNumbers) {
  ReportData d;
  d.trials.push_back(trial(0,
                           {{"training.learning_rate", 0.01},
                            {"training.batch_size", 64},
                            {"training.optimizer", "sgdm"}},
                           {0.5}));
  d.trials.push_back(trial(1,
                           {{"training.learning_rate", 0.001},
                            {"training.batch_size", 64.0},
                            {"training.optimizer", "sgdm"}},
                           {0.6}));
  const auto swept = swept_params(d);
  ASSERT_EQ(swept.size(), 1u);  // 64 and 64.0 are one value
  EXPECT_EQ(swept[0].name, "training.learning_rate");
  EXPECT_EQ(swept[0].label, "learning_rate");
  EXPECT_TRUE(swept[0].numeric);
  EXPECT_TRUE(swept[0].log_scale);  // a learning rate, always on a log axis
  EXPECT_DOUBLE_EQ(swept[0].values[0].get<double>(), 0.001);  // sorted numerically
  const auto fixed = fixed_params(d);
  EXPECT_EQ(fixed["training.optimizer"], "sgdm");
  EXPECT_EQ(fixed["training.batch_size"], 64);
}

TEST(ReportModel, HeatmapAxesAreLearningRateAcrossAndBatchSizeDown) {
  const ReportData d = testing::make_synthetic_sweep({.momenta = {0.8, 0.9}});
  const auto swept = swept_params(d);
  ASSERT_EQ(swept.size(), 3u);
  const HeatmapAxes axes = choose_heatmap_axes(swept);
  ASSERT_TRUE(axes.x && axes.y);
  EXPECT_EQ(swept[*axes.x].name, "training.learning_rate");
  EXPECT_EQ(swept[*axes.y].name, "training.batch_size");
}

TEST(ReportModel, HeatmapAxesFallBackToTheParametersWithTheMostValues) {
  ReportData d;
  int n = 0;
  for (double m : {0.5, 0.9})
    for (int depth : {1, 2, 3})
      for (double drop : {0.0, 0.1, 0.2, 0.3})
        d.trials.push_back(
            trial(n++, {{"momentum", m}, {"depth", depth}, {"dropout", drop}}, {0.5}));
  const auto swept = swept_params(d);
  const HeatmapAxes axes = choose_heatmap_axes(swept);
  EXPECT_EQ(swept[*axes.x].name, "dropout");  // 4 values
  EXPECT_EQ(swept[*axes.y].name, "depth");    // 3 values
}

TEST(ReportModel, OneOrNoSweptParameterIsHandled) {
  ReportData one;
  one.trials.push_back(trial(0, {{"lr", 0.1}}, {0.5}));
  one.trials.push_back(trial(1, {{"lr", 0.2}}, {0.6}));
  const ReportModel m1 = analyze(one);
  ASSERT_TRUE(m1.axes.x);
  EXPECT_FALSE(m1.axes.y);
  ASSERT_EQ(m1.cells.size(), 2u);
  EXPECT_EQ(m1.cells[1].y, 0u);

  ReportData none;
  none.trials.push_back(trial(0, {{"lr", 0.1}}, {0.5}));
  const ReportModel m0 = analyze(none);
  EXPECT_FALSE(m0.axes.x);
  EXPECT_TRUE(m0.cells.empty());
  EXPECT_EQ(m0.best, 0u);
}

TEST(ReportModel, HeatmapCellHoldsTheBestTrialOfTheCell) {
  ReportData d;
  // Same (lr, bs), three momenta: the cell must show the 0.88 trial, and count 3 trials.
  d.trials.push_back(trial(0, {{"lr", 0.01}, {"bs", 64}, {"momentum", 0.5}}, {0.70}));
  d.trials.push_back(trial(1, {{"lr", 0.01}, {"bs", 64}, {"momentum", 0.9}}, {0.88}));
  d.trials.push_back(
      trial(2, {{"lr", 0.01}, {"bs", 64}, {"momentum", 0.99}}, {kNaN}, TrialState::diverged));
  d.trials.push_back(trial(3, {{"lr", 0.1}, {"bs", 64}, {"momentum", 0.9}}, {0.80}));
  d.trials.push_back(trial(4, {{"lr", 0.01}, {"bs", 128}, {"momentum", 0.9}}, {0.85}));
  const ReportModel m = analyze(d);
  ASSERT_TRUE(m.axes.x && m.axes.y);
  EXPECT_EQ(m.swept[*m.axes.x].name, "lr");
  EXPECT_EQ(m.swept[*m.axes.y].name, "bs");
  ASSERT_EQ(m.cells.size(), 3u);
  const auto cell = std::find_if(m.cells.begin(), m.cells.end(), [](const HeatmapCell& c) {
    return c.x == 0 && c.y == 0;  // lr 0.01, bs 64
  });
  ASSERT_NE(cell, m.cells.end());
  EXPECT_EQ(cell->trial, 1u);
  EXPECT_DOUBLE_EQ(cell->value, 0.88);
  EXPECT_EQ(cell->trials_in_cell, 2u);  // the diverged trial has no score and is not counted
  ASSERT_TRUE(m.best_cell && m.runner_up_cell);
  EXPECT_EQ(m.cells[*m.best_cell].trial, 1u);
  EXPECT_EQ(m.cells[*m.runner_up_cell].trial, 4u);  // 0.85: the margin is 0.03
  EXPECT_EQ(m.runner_up, 4u);
}

// The one ranking (common/trial_score.h) inside a cell and for the runner-up too: a trial that
// failed after a better value stands behind every trial that did not break.
TEST(ReportModel, CellsAndRunnerUpRankFailedAndDivergedTrialsLast) {
  ReportData d;
  d.trials.push_back(trial(0, {{"lr", 0.01}, {"bs", 64}}, {0.70}));
  d.trials.push_back(trial(1, {{"lr", 0.01}, {"bs", 64}}, {0.95}, TrialState::failed));
  d.trials.push_back(trial(2, {{"lr", 0.1}, {"bs", 128}}, {0.80}));
  d.trials.push_back(trial(3, {{"lr", 0.1}, {"bs", 64}}, {0.99, kNaN}, TrialState::diverged));
  const ReportModel m = analyze(d);
  EXPECT_EQ(m.best, 2u);
  EXPECT_EQ(m.runner_up, 0u);  // not the failed 0.95 nor the diverged 0.99
  const auto cell = std::find_if(m.cells.begin(), m.cells.end(), [&](const HeatmapCell& c) {
    return c.trial == 0u || c.trial == 1u;
  });
  ASSERT_NE(cell, m.cells.end());
  EXPECT_EQ(cell->trial, 0u);
  EXPECT_EQ(cell->trials_in_cell, 2u);
  ASSERT_TRUE(m.runner_up_cell);
  EXPECT_EQ(m.cells[*m.runner_up_cell].trial, 0u);
}

TEST(ReportModel, SyntheticSweepWinnerIsTheSweetSpot) {
  const ReportData d = testing::make_synthetic_sweep();
  const ReportModel m = analyze(d);
  ASSERT_TRUE(m.best);
  EXPECT_DOUBLE_EQ(d.trials[*m.best].params["training.learning_rate"].get<double>(), 0.01);
  EXPECT_EQ(d.trials[*m.best].params["training.batch_size"].get<int>(), 64);
}

// Which charts: a grid gets lines through the best of each value and a heatmap; a random search
// gets slice plots (one point per trial) and, when its learning rates and batch sizes form no
// grid, a scatter coloured by the metric instead of a sparse heatmap.
TEST(ReportModel, ARandomSweepGetsSlicePlotsAndAScatterAGridLinesAndAHeatmap) {
  ReportData grid;
  grid.method = "grid";
  int n = 0;
  for (double lr : {0.001, 0.01, 0.1})
    for (int bs : {32, 64})
      grid.trials.push_back(
          trial(n++, {{"training.learning_rate", lr}, {"training.batch_size", bs}}, {0.5 + lr}));
  const ReportModel g = analyze(grid);
  EXPECT_FALSE(g.charts.slices);
  EXPECT_TRUE(g.charts.heatmap);

  ReportData random;
  random.method = "random";
  const double draws[] = {0.0031622776601683794, 0.0457, 0.00071, 0.012, 0.2};
  n = 0;
  for (double lr : draws)
    random.trials.push_back(trial(
        n++, {{"training.learning_rate", lr}, {"training.batch_size", n % 2 ? 32 : 64}}, {0.6}));
  const ReportModel r = analyze(random);
  EXPECT_TRUE(r.charts.slices);
  EXPECT_FALSE(r.charts.heatmap) << "5 learning rates × 2 batch sizes, 5 trials: no grid";
  const sweep::Json payload = build_payload(random, r);
  EXPECT_EQ(payload.at("charts"), (sweep::Json{{"slices", true}, {"heatmap", false}}));

  // A random search over values that happen to fill a grid keeps its heatmap, not its lines.
  random.method = "random";
  grid.method = "random";
  const ReportModel full = analyze(grid);
  EXPECT_TRUE(full.charts.slices);
  EXPECT_TRUE(full.charts.heatmap);
  // One swept parameter of a random search: the slice plot says it all.
  ReportData one;
  one.method = "random";
  for (double lr : draws) one.trials.push_back(trial(n++, {{"training.learning_rate", lr}}, {0.6}));
  EXPECT_FALSE(analyze(one).charts.heatmap);
  // Unknown method (a store written by other code): the values decide.
  random.method.clear();
  EXPECT_TRUE(analyze(random).charts.slices);
  grid.method.clear();
  EXPECT_FALSE(analyze(grid).charts.slices);
}

TEST(ReportModel, DownsampleKeepsShortSeriesAndAveragesLongOnes) {
  std::vector<SeriesPoint> points;
  for (int i = 0; i < 10; ++i) points.push_back({i, i * 0.1, static_cast<double>(i)});
  const auto same = downsample(points, 10);
  ASSERT_EQ(same.size(), 10u);
  EXPECT_DOUBLE_EQ(*same[3].value, 3.0);

  const auto halved = downsample(points, 5);
  ASSERT_EQ(halved.size(), 5u);
  EXPECT_DOUBLE_EQ(*halved[0].value, 0.5);  // mean of 0 and 1
  EXPECT_DOUBLE_EQ(halved[0].epoch, 0.05);
  EXPECT_DOUBLE_EQ(*halved[4].value, 8.5);

  std::vector<SeriesPoint> many;
  for (int i = 0; i < 100'000; ++i) many.push_back({i, i / 1000.0, 1.0});
  const auto down = downsample(many, 200);
  ASSERT_EQ(down.size(), 200u);
  EXPECT_NEAR(down.back().epoch, 99.75, 0.01);
  EXPECT_TRUE(downsample({}, 200).empty());
}

TEST(ReportModel, DownsampleLeavesNonFiniteOutOfTheMean) {
  std::vector<SeriesPoint> points = {{1, 1, 1.0}, {2, 2, kNaN}, {3, 3, kNaN}, {4, 4, kInf}};
  const auto down = downsample(points, 2);
  ASSERT_EQ(down.size(), 2u);
  EXPECT_DOUBLE_EQ(*down[0].value, 1.0);  // NaN left out of the mean
  EXPECT_FALSE(down[1].value);            // nothing finite in the bucket
  const auto raw = downsample(points, 10);
  EXPECT_FALSE(raw[1].value);
}

TEST(ReportModel, RoundSignificantKeepsFiveDigits) {
  EXPECT_DOUBLE_EQ(round_significant(0.876543210, 5), 0.87654);
  EXPECT_DOUBLE_EQ(round_significant(123456.7, 5), 123460);
  EXPECT_DOUBLE_EQ(round_significant(0, 5), 0);
  EXPECT_TRUE(std::isnan(round_significant(kNaN, 5)));
}

TEST(ReportModel, ClassLabelsNameFashionMnistClasses) {
  const auto fashion = class_labels("fashion-mnist", 10);
  ASSERT_EQ(fashion.size(), 10u);
  EXPECT_EQ(fashion[0], "T-shirt/top");
  EXPECT_EQ(fashion[9], "Ankle boot");
  EXPECT_EQ(class_labels("mnist", 10)[7], "7");
  EXPECT_EQ(class_labels("fashion-mnist", 3)[2], "2");  // not Fashion-MNIST's shape: numbers
}

TEST(ReportModel, TrialSecondsPrefersTimestamps) {
  TrialData t;
  t.summary = {{"elapsed_seconds", 12.5}};
  EXPECT_DOUBLE_EQ(*trial_seconds(t), 12.5);
  t.started_at = 100;
  t.finished_at = 160;
  EXPECT_DOUBLE_EQ(*trial_seconds(t), 60);
  EXPECT_FALSE(trial_seconds(TrialData{}));
}

}  // namespace
}  // namespace sweep::reports
