/*
 * report_model.h — the numbers the report shows, computed from ReportData (no HTML here).
 *
 * The non-obvious decisions:
 *  - A trial's score and the ranking of trials are common/trial_score.h's (the rule
 *    Store::best_trial picks by): the best finite value of the target metric over all its steps,
 *    so a trial that peaked at epoch 6 and then overfit still shows its peak; failed and diverged
 *    trials rank last; ties go to the earlier step, then the lower trial number. A trial with no
 *    series of the metric has no score, as in the store.
 *  - "Swept" parameters are those that take more than one distinct value across the trials, read
 *    from the trials themselves: the report needs no config parser, and a random search over a
 *    continuous range still counts as swept.
 *  - Heatmap axes: learning rate across, batch size down when the sweep varies them; otherwise
 *    the swept parameters with the most distinct values. A cell is the best trial of the cell, so
 *    other swept parameters (momentum, ...) are maximised over, and the tooltip names them.
 */
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/json.h"
#include "common/trial_score.h"
#include "reports/report_data.h"

namespace sweep::reports {

// TrialScore (best, last, their steps and epochs): common/trial_score.h.
TrialScore score_trial(const TrialData& trial, const std::string& metric, Goal goal);
std::vector<TrialScore> score_trials(const ReportData& data);

// Index into data.trials of the best trial, or nullopt when no trial has a finite score.
std::optional<std::size_t> best_trial_index(const ReportData& data,
                                            const std::vector<TrialScore>& scores);

struct SweptParam {
  std::string name;                 // as in the params JSON: "training.learning_rate"
  std::string label;                // short, for axes: "learning_rate"
  std::vector<sweep::Json> values;  // distinct values, sorted (numbers numerically)
  bool numeric = true;              // every value is a number
  bool log_scale = false;           // numeric, positive, and spans >= 20x (or is a learning rate)
  std::size_t index_of(const sweep::Json& value) const;  // values.size() when absent
};

// Parameters with more than one distinct value, in name order.
std::vector<SweptParam> swept_params(const ReportData& data);
// Parameters with exactly one value across all trials (the fixed part of the search space).
sweep::Json fixed_params(const ReportData& data);

bool is_learning_rate(const std::string& param_name);
bool is_batch_size(const std::string& param_name);

struct HeatmapAxes {
  std::optional<std::size_t> x;  // index into swept params: learning rate when swept
  std::optional<std::size_t> y;  // batch size when swept
};
HeatmapAxes choose_heatmap_axes(const std::vector<SweptParam>& params);

struct HeatmapCell {
  std::size_t x = 0, y = 0;  // value indices along the axes (y = 0 when there is no y axis)
  std::size_t trial = 0;     // index into data.trials of the cell's best trial
  double value = 0;          // its score
  std::size_t trials_in_cell = 0;
};
// One cell per (x, y) value pair that has a trial with a finite score.
std::vector<HeatmapCell> heatmap_cells(const ReportData& data,
                                       const std::vector<TrialScore>& scores,
                                       const std::vector<SweptParam>& params,
                                       const HeatmapAxes& axes);

// How the metric is charted against the parameters:
//  - per parameter: in a grid the trials line up, so a line joins the best trial of each value; a
//    sweep of any other method (random, or a search that learns) gets a slice plot per swept
//    parameter instead — every trial a point, no lines (a line through random draws means
//    nothing), a log axis for log-distributed values;
//  - the two heatmap axes (learning rate × batch size): a heatmap when their values form a grid
//    (every pair of values occurs), else a scatter of the trials coloured by the metric, since
//    random draws would leave a sparse map of mostly empty cells (with one axis: nothing beyond
//    the slice plot).
struct ChartChoice {
  bool slices = false;  // slice scatter plots instead of lines through the best per value
  bool heatmap = true;  // false: a scatter coloured by the metric replaces the heatmap
};
ChartChoice choose_charts(const ReportData& data, const std::vector<SweptParam>& params,
                          const HeatmapAxes& axes);

struct CurvePoint {
  double epoch = 0;
  std::optional<double> value;  // nullopt: non-finite (or no finite value in the bucket)
};
// Averages consecutive points into at most `max_points` buckets of equal count (epoch and value
// are means; non-finite values are left out of the mean; a bucket with none finite is nullopt).
// A series with at most max_points points is returned point for point.
std::vector<CurvePoint> downsample(const std::vector<SeriesPoint>& points, std::size_t max_points);

// `value` rounded to `digits` significant digits (keeps the JSON short; 5 are plenty to draw).
double round_significant(double value, int digits);

// Labels for a confusion matrix of `classes` classes of `dataset` (Fashion-MNIST's names, ...).
std::vector<std::string> class_labels(const std::string& dataset, std::size_t classes);

// Seconds the trial ran: finished - started, else summary.elapsed_seconds.
std::optional<double> trial_seconds(const TrialData& trial);

// The optimisation history (Optuna's plot_optimization_history): every finished trial (completed,
// stopped early, failed, diverged, cancelled; not running, queued or interrupted ones, which will
// run again) in trial-number order, with the best score so far. A trial's value is its score
// (TrialScore::best, the value the report ranks by), so the line ends at the best trial's value
// once that trial has finished; a trial without a finite score keeps the best so far unchanged.
struct HistoryPoint {
  std::size_t trial = 0;              // index into data.trials
  std::optional<double> best_so_far;  // nullopt until a finished trial has a finite score
};
std::vector<HistoryPoint> trial_history(const ReportData& data,
                                        const std::vector<TrialScore>& scores);

// Parameter importance (param_importance.cpp): how much of the spread of the metric each swept
// parameter explains, from a random forest (random_forest.h) fitted to the completed and
// stopped-early trials with a finite score, plus each numeric parameter's Spearman rank
// correlation with the metric.
inline constexpr std::size_t kMinImportanceTrials = 5;
struct ParamImportance {
  std::size_t param = 0;           // index into the swept parameters
  double importance = 0;           // share of the forest's decrease in squared error (sums to 1)
  std::optional<double> spearman;  // numeric parameters only; nullopt when either side is constant
};
struct ImportanceResult {
  std::vector<ParamImportance> rows;             // most important first; empty when not shown
  std::size_t completed = 0, stopped_early = 0;  // the trials the forest was fitted to
  std::string reason;                            // why there are no rows ("" when there are)
};
ImportanceResult parameter_importance(const ReportData& data, const std::vector<TrialScore>& scores,
                                      const std::vector<SweptParam>& swept);
// Spearman's rank correlation (ties get their mean rank); nullopt for fewer than 2 pairs or a
// constant side.
std::optional<double> spearman_correlation(const std::vector<double>& x,
                                           const std::vector<double>& y);

// Everything above for one sweep, computed once and shared by the HTML and the chart data.
struct ReportModel {
  std::vector<TrialScore> scores;   // per trial, same order as data.trials
  std::optional<std::size_t> best;  // index of the best trial
  std::vector<SweptParam> swept;
  sweep::Json fixed = sweep::Json::object();
  HeatmapAxes axes;
  ChartChoice charts;
  std::vector<HeatmapCell> cells;
  std::optional<std::size_t> best_cell;       // the cell holding the best trial
  std::optional<std::size_t> runner_up_cell;  // best of the other cells (the margin of victory)
  std::optional<std::size_t> runner_up;       // second-best trial overall
  std::vector<HistoryPoint> history;
  ImportanceResult importance;
};
ReportModel analyze(const ReportData& data);

}  // namespace sweep::reports
