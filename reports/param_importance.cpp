/*
 * param_importance.cpp — parameter_importance() and spearman_correlation() (report_model.h).
 *
 * The non-obvious decisions:
 *  - Which trials: completed ones and those stopped early, each at its score (its best value
 *    over the epochs it ran). Under ASHA or hyperband most trials are stopped early; leaving them
 *    out would fit the forest to the few survivors, which all look alike. Their value is the
 *    verdict the stopping rule acted on, so it is what "this setting did worse" means here.
 *    Failed, diverged and cancelled trials have no comparable value and are left out.
 *  - How parameters become features: a number is one column, in log10 space when the report
 *    draws it on a log axis (SweptParam::log_scale; the split thresholds then fall at geometric
 *    midpoints, though a tree's partitions and Spearman's ranks are the same either way); any
 *    other value (a string, a list) is one-hot encoded, one 0/1 column per value, and the
 *    parameter's importance is the sum of its columns' (as Optuna does). A trial without the
 *    parameter gets a value below every other (numbers) or a category of its own.
 *  - The forest is fixed (64 trees, depth 16, seed 20240917): the same trials give the same
 *    figures in every report, live or not.
 */
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "reports/random_forest.h"
#include "reports/report_model.h"

namespace sweep::reports {
namespace {

// Mean rank (1-based) of each value, ties sharing their mean rank.
std::vector<double> ranks_of(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && values[order[j]] == values[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = mean_rank;
    i = j;
  }
  return ranks;
}

std::optional<double> pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (!(sxx > 0) || !(syy > 0)) return std::nullopt;
  return std::clamp(sxy / std::sqrt(sxx * syy), -1.0, 1.0);
}

// One parameter as forest features over the fitted trials; no columns when it is constant there.
struct Encoded {
  std::vector<std::vector<double>> columns;
  std::vector<double> numbers;  // numeric parameters: the values of the trials that have one
  std::vector<double> targets;  // the metric of those trials (for the correlation)
};

Encoded encode(const ReportData& data, const std::vector<std::size_t>& fitted,
               const std::vector<double>& target, const SweptParam& param) {
  Encoded out;
  const auto value_of = [&](std::size_t trial) -> const Json* {
    const Json& params = data.trials[trial].params;
    if (!params.is_object()) return nullptr;
    const auto it = params.find(param.name);
    return it == params.end() ? nullptr : &*it;
  };
  if (param.numeric) {
    std::vector<std::optional<double>> xs;
    double lo = 0, hi = 0;
    for (std::size_t k = 0; k < fitted.size(); ++k) {
      const Json* v = value_of(fitted[k]);
      if (!v || !v->is_number()) {
        xs.emplace_back();
        continue;
      }
      const double raw = v->get<double>();
      const double x = param.log_scale && raw > 0 ? std::log10(raw) : raw;
      if (out.numbers.empty()) lo = hi = x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      xs.push_back(x);
      out.numbers.push_back(raw);
      out.targets.push_back(target[k]);
    }
    const double missing = lo - (hi - lo) - 1;  // below every value: a side of its own
    std::vector<double> column;
    column.reserve(xs.size());
    for (const auto& x : xs) column.push_back(x.value_or(missing));
    if (std::any_of(column.begin(), column.end(), [&](double x) { return x != column.front(); }))
      out.columns.push_back(std::move(column));
    return out;
  }
  std::map<std::string, std::vector<double>> one_hot;  // by the value's JSON text
  for (std::size_t k = 0; k < fitted.size(); ++k) {
    const Json* v = value_of(fitted[k]);
    auto [it, added] = one_hot.try_emplace(v ? v->dump() : std::string("(missing)"));
    if (added) it->second.assign(fitted.size(), 0.0);
    it->second[k] = 1;
  }
  if (one_hot.size() >= 2)
    for (auto& [text, column] : one_hot) out.columns.push_back(std::move(column));
  return out;
}

}  // namespace

std::optional<double> spearman_correlation(const std::vector<double>& x,
                                           const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return std::nullopt;
  return pearson(ranks_of(x), ranks_of(y));
}

ImportanceResult parameter_importance(const ReportData& data, const std::vector<TrialScore>& scores,
                                      const std::vector<SweptParam>& swept) {
  ImportanceResult result;
  std::vector<std::size_t> fitted;
  std::vector<double> target;
  for (std::size_t i = 0; i < data.trials.size() && i < scores.size(); ++i) {
    const TrialState state = data.trials[i].state;
    if (!scores[i].best || (state != TrialState::completed && state != TrialState::stopped_early))
      continue;
    fitted.push_back(i);
    target.push_back(*scores[i].best);
    ++(state == TrialState::completed ? result.completed : result.stopped_early);
  }
  const std::string& metric = data.metric_name;
  const std::string trials_text = std::to_string(fitted.size()) +
                                  (fitted.size() == 1 ? " trial" : " trials") + " with a finite " +
                                  metric;
  if (swept.empty()) {
    result.reason = data.trials.empty() ? "No trials yet."
                                        : "No parameter was swept, so there is nothing to rank.";
    return result;
  }
  if (fitted.size() < kMinImportanceTrials) {
    result.reason = "Parameter importance needs at least " + std::to_string(kMinImportanceTrials) +
                    " completed or early-stopped trials with a finite " + metric + "; there " +
                    (fitted.size() == 1 ? "is " : "are ") + std::to_string(fitted.size()) +
                    " so far.";
    return result;
  }

  std::vector<std::vector<double>> columns;
  std::vector<std::size_t> owner;  // column -> index into swept
  std::vector<std::optional<double>> correlation(swept.size());
  for (std::size_t p = 0; p < swept.size(); ++p) {
    Encoded encoded = encode(data, fitted, target, swept[p]);
    if (swept[p].numeric) correlation[p] = spearman_correlation(encoded.numbers, encoded.targets);
    for (auto& column : encoded.columns) {
      columns.push_back(std::move(column));
      owner.push_back(p);
    }
  }
  if (columns.empty()) {
    result.reason = "No swept parameter varies across the " + trials_text + ".";
    return result;
  }
  if (std::all_of(target.begin(), target.end(), [&](double v) { return v == target.front(); })) {
    result.reason =
        "All " + trials_text + " reached the same value: no parameter explains a difference.";
    return result;
  }
  const std::vector<double> shares = forest_importance(columns, target, ForestOptions{});
  std::vector<double> by_param(swept.size(), 0.0);
  for (std::size_t c = 0; c < columns.size(); ++c) by_param[owner[c]] += shares[c];
  if (!(std::accumulate(by_param.begin(), by_param.end(), 0.0) > 0)) {
    result.reason = "No swept parameter explains any of the spread of " + metric + " across the " +
                    trials_text + ".";
    return result;
  }
  for (std::size_t p = 0; p < swept.size(); ++p)
    result.rows.push_back({p, by_param[p], correlation[p]});
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const ParamImportance& a, const ParamImportance& b) {
                     return a.importance > b.importance;
                   });
  return result;
}

}  // namespace sweep::reports
