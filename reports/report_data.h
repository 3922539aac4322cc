/*
 * report_data.h — everything the HTML report is drawn from, as plain structs.
 *
 * The non-obvious decision: the report does not read store rows directly. load_report_data()
 * (report.h) copies one sweep out of the store into a ReportData, and render_report() is a pure
 * function of it. So the rendering, the analysis (best trial, heatmap cells, downsampling) and the
 * escaping are tested on hand-built data, without a database, and the benchmark can time
 * "load" and "render" apart.
 *
 * Metric values keep NaN and ±Inf as they are (a diverged run's loss); the report writes them
 * as null plus a kind, never as a number.
 */
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/trial_score.h"
#include "common/trial_state.h"

namespace sweep::reports {

// The metric's goal, as the store keeps it (common/trial_score.h).
using Goal = MetricGoal;

// One point of one metric series of one trial.
struct SeriesPoint {
  std::int64_t step = 0;  // iteration, or epoch for per-epoch series; increasing within a series
  double epoch = 0;       // (fractional) epoch; the x axis of the learning curves
  double value = 0;       // may be NaN / ±Inf
};

struct TrialData {
  std::int64_t id = 0;
  std::int64_t number = 0;  // 0-based, what people call "trial 7"
  TrialState state = TrialState::queued;
  sweep::Json params = sweep::Json::object();  // {"training.learning_rate": 0.01, ...}
  // What the trial recorded when it ended. Keys the report reads when present
  // (common/metric_names.h, metric_names::summary):
  //   images_per_second, elapsed_seconds, epochs_completed, best_epoch,
  //   confusion (classes x classes, true row / predicted column: nested arrays, or flat with
  //   "classes"), class_names (array of strings).
  sweep::Json summary = sweep::Json::object();
  std::string device, error, stop_reason;
  std::optional<double> started_at, finished_at;           // UTC seconds since the Unix epoch
  std::map<std::string, std::vector<SeriesPoint>> series;  // by metric name, ordered by step
};

struct ReportData {
  std::string name;
  std::string config_yaml;  // the config file as the user wrote it; shown verbatim (escaped)
  std::string config_path;
  std::string metric_name = "val_accuracy";  // the sweep's target metric
  Goal goal = Goal::maximize;
  std::string sweep_state;  // "completed", "running", ...
  std::string devices;      // e.g. "cuda:0,cuda:1" or "cpu x2"
  std::string dataset;      // data.dataset of the config ("fashion-mnist"): picks class labels
  std::string method;       // sweep.method of the config ("grid", "random"); "" when unknown
  double created_at = 0;
  std::optional<double> started_at, finished_at;
  double generated_at = 0;        // when the report was made (0: not shown)
  std::vector<TrialData> trials;  // ordered by number
};

}  // namespace sweep::reports
