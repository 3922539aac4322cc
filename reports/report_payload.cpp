/*
 * report_payload.cpp — ReportData + ReportModel -> the compact JSON the page draws.
 *
 * The non-obvious decision: trial states are written in a fixed order of interest (completed
 * first, queued last) for the counts, and curves are aligned index for index with `trials`, so
 * the page never has to join them by id.
 */
#include "reports/report_payload.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/json.h"
#include "common/metric_names.h"

namespace sweep::reports {
namespace {

// Integral values print as integers ("10", not "10.0"): epochs, counts and steps are most of them.
Json compact(double v) {
  if (v == std::trunc(v) && std::abs(v) < 1e15) return static_cast<std::int64_t>(v);
  return v;
}

Json number_or_null(std::optional<double> v, int digits = 5) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return compact(round_significant(*v, digits));
}

Json kind_of(std::optional<double> v) {
  if (!v || std::isfinite(*v)) return nullptr;
  if (std::isnan(*v)) return "nan";
  return *v > 0 ? "inf" : "-inf";
}

const std::vector<SeriesPoint>* find_series(const TrialData& t, const std::string& name) {
  if (name.empty()) return nullptr;
  const auto it = t.series.find(name);
  return it == t.series.end() || it->second.empty() ? nullptr : &it->second;
}

Json curve_json(const std::vector<SeriesPoint>& points, std::size_t max_points) {
  const std::vector<CurvePoint> curve = downsample(points, max_points);
  Json ys = Json::array(), xs = Json::array();
  std::vector<double> x_values;
  x_values.reserve(curve.size());
  for (const CurvePoint& p : curve) {
    ys.push_back(number_or_null(p.value));
    x_values.push_back(round_significant(p.epoch, 4));
  }
  Json out = Json::object();
  out["y"] = std::move(ys);
  bool even = x_values.size() >= 2;
  const double x0 = x_values.empty() ? 0 : x_values[0];
  const double dx = x_values.size() >= 2 ? x_values[1] - x_values[0] : 0;
  for (std::size_t i = 2; even && i < x_values.size(); ++i)
    even = std::abs(x_values[i] - (x0 + static_cast<double>(i) * dx)) <=
           1e-9 * std::max(1.0, std::abs(x_values[i]));
  if (even && dx > 0) {
    out["x0"] = compact(x0);
    out["dx"] = compact(round_significant(dx, 6));
  } else {
    for (const double x : x_values) xs.push_back(compact(x));
    out["x"] = std::move(xs);
  }
  return out;
}

// The first non-finite value (by epoch) among the given series: where a run diverged.
Json first_nonfinite(const TrialData& t, std::initializer_list<const std::string*> names) {
  Json found = nullptr;
  double found_epoch = 0;
  for (const std::string* name : names) {
    const std::vector<SeriesPoint>* points = find_series(t, *name);
    if (!points) continue;
    for (const SeriesPoint& p : *points) {
      if (std::isfinite(p.value)) continue;
      if (found.is_null() || p.epoch < found_epoch) {
        found_epoch = p.epoch;
        found = {{"metric", *name},
                 {"epoch", compact(round_significant(p.epoch, 4))},
                 {"kind", kind_of(p.value)}};
      }
      break;
    }
  }
  return found;
}

std::optional<double> summary_number(const Json& summary, const char* key) {
  if (!summary.is_object()) return std::nullopt;
  const auto it = summary.find(key);
  if (it == summary.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<double> last_value(const std::vector<SeriesPoint>* points) {
  if (!points) return std::nullopt;
  return points->back().value;
}

std::optional<double> last_finite(const std::vector<SeriesPoint>* points) {
  if (!points) return std::nullopt;
  for (auto it = points->rbegin(); it != points->rend(); ++it)
    if (std::isfinite(it->value)) return it->value;
  return std::nullopt;
}

std::optional<double> epochs_of(const TrialData& t, const std::vector<SeriesPoint>* metric,
                                const std::vector<SeriesPoint>* loss) {
  if (auto e = summary_number(t.summary, metric_names::summary::kEpochsCompleted)) return e;
  std::optional<double> most;
  for (const auto* points : {metric, loss})
    if (points) most = std::max(most.value_or(0), points->back().epoch);
  return most;
}

Json param_value_or_null(const TrialData& t, const std::string& name) {
  if (!t.params.is_object()) return nullptr;
  const auto it = t.params.find(name);
  return it == t.params.end() ? Json(nullptr) : *it;
}

}  // namespace

std::string loss_series_name(const ReportData& data) {
  // "loss" first: the built-in trainer reports it every log_every iterations (dense curves);
  // "train_loss" is its per-validation mean (and what most external programs print).
  for (const char* name : {metric_names::kLoss, metric_names::kTrainLoss})
    for (const TrialData& t : data.trials)
      if (t.series.count(name)) return name;
  return "";
}

std::vector<std::vector<double>> confusion_matrix(const Json& summary) {
  std::vector<std::vector<double>> matrix;
  if (!summary.is_object()) return matrix;
  const auto it = summary.find(metric_names::summary::kConfusion);
  if (it == summary.end() || !it->is_array() || it->empty()) return matrix;
  const Json& c = *it;
  if (c[0].is_array()) {
    const std::size_t n = c.size();
    for (const Json& row : c) {
      if (!row.is_array() || row.size() != n) return {};
      std::vector<double> values;
      for (const Json& v : row) {
        if (!v.is_number() || !(v.get<double>() >= 0)) return {};
        values.push_back(v.get<double>());
      }
      matrix.push_back(std::move(values));
    }
    return matrix;
  }
  const auto classes = summary_number(summary, metric_names::summary::kClasses);
  const std::size_t n = classes && *classes > 0
                            ? static_cast<std::size_t>(*classes)
                            : static_cast<std::size_t>(std::lround(std::sqrt(c.size())));
  if (n == 0 || n * n != c.size()) return {};
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<double> values;
    for (std::size_t col = 0; col < n; ++col) {
      const Json& v = c[r * n + col];
      if (!v.is_number() || !(v.get<double>() >= 0)) return {};
      values.push_back(v.get<double>());
    }
    matrix.push_back(std::move(values));
  }
  return matrix;
}

Json build_payload(const ReportData& data, const ReportModel& model) {
  Json out = Json::object();
  out["name"] = data.name;
  out["metric"] = data.metric_name;
  out["goal"] = data.goal == Goal::maximize ? "maximize" : "minimize";
  out["dataset"] = data.dataset;
  const std::string loss_name = loss_series_name(data);
  out["lossName"] = loss_name;

  Json params = Json::array();
  for (const SweptParam& p : model.swept)
    params.push_back({{"name", p.name},
                      {"label", p.label},
                      {"values", p.values},
                      {"numeric", p.numeric},
                      {"log", p.log_scale}});
  out["params"] = std::move(params);
  out["fixed"] = model.fixed;
  out["axes"] = {{"x", model.axes.x ? Json(*model.axes.x) : Json(nullptr)},
                 {"y", model.axes.y ? Json(*model.axes.y) : Json(nullptr)}};
  out["charts"] = {{"slices", model.charts.slices}, {"heatmap", model.charts.heatmap}};

  Json trials = Json::array(), curves = Json::array();
  for (std::size_t i = 0; i < data.trials.size(); ++i) {
    const TrialData& t = data.trials[i];
    const TrialScore& s = model.scores[i];
    const std::vector<SeriesPoint>* metric = find_series(t, data.metric_name);
    const std::vector<SeriesPoint>* loss = find_series(t, loss_name);

    Json p = Json::array();
    for (const SweptParam& sp : model.swept) p.push_back(param_value_or_null(t, sp.name));
    // A finished trial's rate over its run; a running one's latest.
    std::optional<double> ips = summary_number(t.summary, metric_names::summary::kImagesPerSecond);
    if (!ips) ips = last_finite(find_series(t, metric_names::kImagesPerSecond));
    trials.push_back({{"id", t.id},
                      {"n", t.number},
                      {"state", std::string(to_string(t.state))},
                      {"p", std::move(p)},
                      {"best", number_or_null(s.best)},
                      {"bestEpoch", number_or_null(s.best_epoch, 4)},
                      {"final", number_or_null(s.last)},
                      {"finalKind", kind_of(s.last)},
                      {"loss", number_or_null(last_value(loss))},
                      {"lossKind", kind_of(last_value(loss))},
                      {"epochs", number_or_null(epochs_of(t, metric, loss), 4)},
                      {"time", number_or_null(trial_seconds(t), 4)},
                      {"ips", number_or_null(ips, 4)},
                      {"device", t.device},
                      {"error", t.error},
                      {"stop", t.stop_reason}});
    curves.push_back({{"m", metric ? curve_json(*metric, kMaxMetricPoints) : Json(nullptr)},
                      {"l", loss ? curve_json(*loss, kMaxLossPoints) : Json(nullptr)},
                      {"nonfinite", first_nonfinite(t, {&data.metric_name, &loss_name})}});
  }
  out["trials"] = std::move(trials);
  out["curves"] = std::move(curves);

  const auto index_or_null = [](std::optional<std::size_t> v) {
    return v ? Json(*v) : Json(nullptr);
  };
  out["best"] = index_or_null(model.best);
  out["runnerUp"] = index_or_null(model.runner_up);
  Json heat = Json::array();
  for (const HeatmapCell& c : model.cells)
    heat.push_back({c.x, c.y, compact(round_significant(c.value, 5)), c.trial, c.trials_in_cell});
  out["heat"] = std::move(heat);
  out["bestCell"] = index_or_null(model.best_cell);
  out["runnerUpCell"] = index_or_null(model.runner_up_cell);

  out["confusion"] = nullptr;
  if (model.best) {
    const TrialData& best = data.trials[*model.best];
    const auto matrix = confusion_matrix(best.summary);
    if (!matrix.empty()) {
      std::vector<std::string> labels = class_labels(data.dataset, matrix.size());
      const char* names = metric_names::summary::kClassNames;
      if (best.summary.contains(names) && best.summary[names].is_array() &&
          best.summary[names].size() == matrix.size()) {
        labels.clear();
        for (const Json& name : best.summary[names])
          labels.push_back(name.is_string() ? name.get<std::string>() : name.dump());
      }
      Json rows = Json::array();
      for (const auto& row : matrix) {
        Json cells = Json::array();
        for (const double v : row) cells.push_back(compact(v));
        rows.push_back(std::move(cells));
      }
      out["confusion"] = {{"trial", *model.best}, {"labels", labels}, {"matrix", std::move(rows)}};
    }
  }

  Json history = Json::array();
  for (const HistoryPoint& h : model.history)
    history.push_back({h.trial, number_or_null(h.best_so_far)});
  out["history"] = std::move(history);
  Json importance_rows = Json::array();
  for (const ParamImportance& row : model.importance.rows)
    importance_rows.push_back({row.param, compact(round_significant(row.importance, 4)),
                               number_or_null(row.spearman, 3)});
  out["importance"] = {
      {"rows", std::move(importance_rows)},
      {"completed", model.importance.completed},
      {"stoppedEarly", model.importance.stopped_early},
      {"reason", model.importance.reason.empty() ? Json(nullptr) : Json(model.importance.reason)}};

  Json counts = Json::array();
  for (const TrialState st :
       {TrialState::completed, TrialState::stopped_early, TrialState::diverged, TrialState::failed,
        TrialState::cancelled, TrialState::interrupted, TrialState::running, TrialState::queued}) {
    const auto n = std::count_if(data.trials.begin(), data.trials.end(),
                                 [&](const TrialData& t) { return t.state == st; });
    if (n > 0) counts.push_back({std::string(to_string(st)), n});
  }
  out["counts"] = std::move(counts);
  return out;
}

}  // namespace sweep::reports
