/*
 * report_model.cpp — best trial, swept parameters, heatmap cells, downsampling.
 *
 * The non-obvious decision: parameter values are compared as JSON values (numbers numerically,
 * 64 == 64.0), never as their text, so a YAML `0.010` and a sampled 0.01 land in the same cell.
 */
#include "reports/report_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "common/json.h"
#include "common/metric_names.h"

namespace sweep::reports {
namespace {

// Total order over JSON values: numbers (numerically) before strings before everything else.
bool json_less(const sweep::Json& a, const sweep::Json& b) {
  const bool an = a.is_number(), bn = b.is_number();
  if (an && bn) return a.get<double>() < b.get<double>();
  if (an != bn) return an;
  const bool as = a.is_string(), bs = b.is_string();
  if (as && bs) return a.get_ref<const std::string&>() < b.get_ref<const std::string&>();
  if (as != bs) return as;
  return a.dump() < b.dump();
}

std::string last_component(const std::string& name) {
  const auto dot = name.find_last_of('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

bool finite_number(const sweep::Json& v) { return v.is_number() && std::isfinite(v.get<double>()); }

std::optional<double> summary_number(const sweep::Json& summary, const std::string& key) {
  if (!summary.is_object()) return std::nullopt;
  if (auto it = summary.find(key); it != summary.end() && finite_number(*it))
    return it->get<double>();
  return std::nullopt;
}

// Does trial i rank ahead of trial j? common/trial_score.h's rule, as Store::best_trial ranks.
bool ranks_before(const ReportData& data, const std::vector<TrialScore>& scores, std::size_t i,
                  std::size_t j) {
  return sweep::ranks_before(ranked(scores[i], data.trials[i].number, data.trials[i].state),
                             ranked(scores[j], data.trials[j].number, data.trials[j].state),
                             data.goal);
}

}  // namespace

TrialScore score_trial(const TrialData& trial, const std::string& metric, Goal goal) {
  TrialScore score;
  if (const auto it = trial.series.find(metric); it != trial.series.end())
    for (const SeriesPoint& p : it->second) score.add(p.step, p.value, goal, p.epoch);
  return score;
}

std::vector<TrialScore> score_trials(const ReportData& data) {
  std::vector<TrialScore> scores;
  scores.reserve(data.trials.size());
  for (const TrialData& t : data.trials)
    scores.push_back(score_trial(t, data.metric_name, data.goal));
  return scores;
}

std::optional<std::size_t> best_trial_index(const ReportData& data,
                                            const std::vector<TrialScore>& scores) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < data.trials.size() && i < scores.size(); ++i)
    if (scores[i].best && (!best || ranks_before(data, scores, i, *best))) best = i;
  return best;
}

std::size_t SweptParam::index_of(const sweep::Json& value) const {
  const auto it = std::lower_bound(values.begin(), values.end(), value, json_less);
  if (it != values.end() && !json_less(value, *it))
    return static_cast<std::size_t>(it - values.begin());
  return values.size();
}

bool is_learning_rate(const std::string& param_name) {
  const std::string last = last_component(param_name);
  return last == "learning_rate" || last == "lr" || last == "base_lr" || last == "learning-rate";
}

bool is_batch_size(const std::string& param_name) {
  const std::string last = last_component(param_name);
  return last == "batch_size" || last == "bs" || last == "batch" || last == "batch-size";
}

namespace {

// name -> distinct values (sorted), over every trial that has the parameter.
std::map<std::string, std::vector<sweep::Json>> distinct_values(const ReportData& data) {
  std::map<std::string, std::vector<sweep::Json>> values;
  for (const TrialData& t : data.trials) {
    if (!t.params.is_object()) continue;
    for (const auto& [name, value] : t.params.items()) values[name].push_back(value);
  }
  for (auto& [name, list] : values) {
    std::sort(list.begin(), list.end(), json_less);
    list.erase(std::unique(list.begin(), list.end(),
                           [](const sweep::Json& a, const sweep::Json& b) {
                             return !json_less(a, b) && !json_less(b, a);
                           }),
               list.end());
  }
  return values;
}

}  // namespace

std::vector<SweptParam> swept_params(const ReportData& data) {
  std::vector<SweptParam> swept;
  for (auto& [name, values] : distinct_values(data)) {
    if (values.size() < 2) continue;
    SweptParam p;
    p.name = name;
    p.label = last_component(name);
    p.numeric = std::all_of(values.begin(), values.end(), finite_number);
    if (p.numeric) {
      const double lo = values.front().get<double>(), hi = values.back().get<double>();
      p.log_scale = lo > 0 && (is_learning_rate(name) || hi / lo >= 20);
    }
    p.values = std::move(values);
    swept.push_back(std::move(p));
  }
  return swept;
}

sweep::Json fixed_params(const ReportData& data) {
  sweep::Json fixed = sweep::Json::object();
  for (auto& [name, values] : distinct_values(data))
    if (values.size() == 1) fixed[name] = values.front();
  return fixed;
}

HeatmapAxes choose_heatmap_axes(const std::vector<SweptParam>& params) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (is_learning_rate(params[i].name)) {
      order.push_back(i);
      break;
    }
  for (std::size_t i = 0; i < params.size(); ++i)
    if (is_batch_size(params[i].name) && !is_learning_rate(params[i].name)) {
      order.push_back(i);
      break;
    }
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (std::find(order.begin(), order.end(), i) == order.end()) rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
    return params[a].values.size() > params[b].values.size();
  });
  order.insert(order.end(), rest.begin(), rest.end());
  HeatmapAxes axes;
  if (order.size() > 0) axes.x = order[0];
  if (order.size() > 1) axes.y = order[1];
  return axes;
}

std::vector<HeatmapCell> heatmap_cells(const ReportData& data,
                                       const std::vector<TrialScore>& scores,
                                       const std::vector<SweptParam>& params,
                                       const HeatmapAxes& axes) {
  std::vector<HeatmapCell> cells;
  if (!axes.x) return cells;
  const SweptParam& px = params.at(*axes.x);
  const SweptParam* py = axes.y ? &params.at(*axes.y) : nullptr;
  std::map<std::pair<std::size_t, std::size_t>, HeatmapCell> by_cell;
  for (std::size_t i = 0; i < data.trials.size(); ++i) {
    const TrialData& t = data.trials[i];
    if (!scores[i].best || !t.params.is_object()) continue;
    const auto vx = t.params.find(px.name);
    if (vx == t.params.end()) continue;
    std::size_t xi = px.index_of(*vx), yi = 0;
    if (xi == px.values.size()) continue;
    if (py) {
      const auto vy = t.params.find(py->name);
      if (vy == t.params.end()) continue;
      yi = py->index_of(*vy);
      if (yi == py->values.size()) continue;
    }
    auto [it, inserted] = by_cell.try_emplace({xi, yi}, HeatmapCell{xi, yi, i, *scores[i].best, 0});
    HeatmapCell& cell = it->second;
    ++cell.trials_in_cell;
    if (!inserted && ranks_before(data, scores, i, cell.trial)) {
      cell.trial = i;
      cell.value = *scores[i].best;
    }
  }
  cells.reserve(by_cell.size());
  for (auto& [key, cell] : by_cell) cells.push_back(cell);
  return cells;
}

std::vector<CurvePoint> downsample(const std::vector<SeriesPoint>& points, std::size_t max_points) {
  std::vector<CurvePoint> out;
  const std::size_t n = points.size();
  if (n == 0 || max_points == 0) return out;
  if (n <= max_points) {
    out.reserve(n);
    for (const SeriesPoint& p : points)
      out.push_back(
          {p.epoch, std::isfinite(p.value) ? std::optional<double>(p.value) : std::nullopt});
    return out;
  }
  out.reserve(max_points);
  for (std::size_t b = 0; b < max_points; ++b) {
    const std::size_t begin = b * n / max_points, end = (b + 1) * n / max_points;
    double epoch_sum = 0, value_sum = 0;
    std::size_t finite = 0;
    for (std::size_t i = begin; i < end; ++i) {
      epoch_sum += points[i].epoch;
      if (std::isfinite(points[i].value)) {
        value_sum += points[i].value;
        ++finite;
      }
    }
    CurvePoint cp;
    cp.epoch = epoch_sum / static_cast<double>(end - begin);
    if (finite > 0) cp.value = value_sum / static_cast<double>(finite);
    out.push_back(cp);
  }
  return out;
}

double round_significant(double value, int digits) {
  if (!std::isfinite(value) || value == 0) return value;
  std::array<char, 40> text{};
  std::snprintf(text.data(), text.size(), "%.*g", digits, value);
  return std::strtod(text.data(), nullptr);
}

std::vector<std::string> class_labels(const std::string& dataset, std::size_t classes) {
  static const std::vector<std::string> fashion = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  static const std::vector<std::string> cifar10 = {
      "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
  if (classes == 10 && (dataset == "fashion-mnist" || dataset == "fashion_mnist")) return fashion;
  if (classes == 10 && (dataset == "cifar10" || dataset == "cifar-10")) return cifar10;
  std::vector<std::string> labels;
  labels.reserve(classes);
  for (std::size_t i = 0; i < classes; ++i) labels.push_back(std::to_string(i));
  return labels;
}

std::optional<double> trial_seconds(const TrialData& trial) {
  if (trial.started_at && trial.finished_at && *trial.finished_at >= *trial.started_at)
    return *trial.finished_at - *trial.started_at;
  return summary_number(trial.summary, metric_names::summary::kElapsedSeconds);
}

ChartChoice choose_charts(const ReportData& data, const std::vector<SweptParam>& params,
                          const HeatmapAxes& axes) {
  ChartChoice choice;
  // A config without a method is a grid (the default); a store written by other code says
  // nothing, and then the values decide: a full grid of pairs draws as one.
  choice.slices = !data.method.empty() && data.method != "grid";
  if (!axes.x) return choice;
  if (!axes.y) {
    choice.heatmap = !choice.slices;
    return choice;
  }
  const SweptParam& px = params[*axes.x];
  const SweptParam& py = params[*axes.y];
  std::set<std::pair<std::size_t, std::size_t>> pairs;
  for (const TrialData& t : data.trials) {
    if (!t.params.is_object() || !t.params.contains(px.name) || !t.params.contains(py.name))
      continue;
    pairs.emplace(px.index_of(t.params.at(px.name)), py.index_of(t.params.at(py.name)));
  }
  choice.heatmap = pairs.size() == px.values.size() * py.values.size();
  if (data.method.empty()) choice.slices = !choice.heatmap;
  return choice;
}

ReportModel analyze(const ReportData& data) {
  ReportModel model;
  model.scores = score_trials(data);
  model.best = best_trial_index(data, model.scores);
  model.swept = swept_params(data);
  model.fixed = fixed_params(data);
  model.axes = choose_heatmap_axes(model.swept);
  model.charts = choose_charts(data, model.swept, model.axes);
  model.cells = heatmap_cells(data, model.scores, model.swept, model.axes);
  for (std::size_t c = 0; c < model.cells.size(); ++c) {
    if (model.best && model.cells[c].trial == *model.best) model.best_cell = c;
  }
  for (std::size_t c = 0; c < model.cells.size(); ++c) {
    if (model.best_cell && c == *model.best_cell) continue;
    const std::size_t t = model.cells[c].trial;
    if (!model.runner_up_cell ||
        ranks_before(data, model.scores, t, model.cells[*model.runner_up_cell].trial))
      model.runner_up_cell = c;
  }
  for (std::size_t i = 0; i < data.trials.size(); ++i) {
    if (!model.scores[i].best || (model.best && i == *model.best)) continue;
    if (!model.runner_up || ranks_before(data, model.scores, i, *model.runner_up))
      model.runner_up = i;
  }
  model.history = trial_history(data, model.scores);
  model.importance = parameter_importance(data, model.scores, model.swept);
  return model;
}

}  // namespace sweep::reports
