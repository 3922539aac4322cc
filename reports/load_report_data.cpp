/*
 * load_report_data.cpp — one sweep out of the store, into ReportData.
 *
 * The non-obvious decisions:
 *  - Three reads, whatever the sweep's size: the sweep row, its trials, and every metric point of
 *    the sweep in ONE pass (Store::for_each_metric, ordered by trial, name, step), appended
 *    straight into each trial's series through an id -> index map. No per-trial query, so 1,000
 *    trials cost the same round trips as one.
 *  - The data set (for the confusion matrix's class names) is read from the config's
 *    data.dataset with yaml-cpp; a config that cannot be parsed only loses the class names.
 */
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include "common/check.h"
#include "common/metric_names.h"
#include "reports/report.h"
#include "store/store.h"

namespace sweep::reports {
namespace {

std::string dataset_of(const std::string& config_yaml) {
  try {
    const YAML::Node root = YAML::Load(config_yaml);
    if (!root.IsMap() || !root["data"]) return "";
    const YAML::Node data = root["data"];
    if (!data.IsMap()) return "";
    // trainer::DataSpec's default when `data:` names none.
    return data["dataset"] && data["dataset"].IsScalar() ? data["dataset"].as<std::string>()
                                                         : std::string("fashion-mnist");
  } catch (const YAML::Exception&) {
    return "";
  }
}

// sweep.method of the config: how its trials were chosen, which decides how the report charts the
// metric against the parameters (report_model.h, choose_charts).
std::string method_of(const std::string& config_yaml) {
  try {
    const YAML::Node root = YAML::Load(config_yaml);
    if (!root.IsMap() || !root["sweep"] || !root["sweep"].IsMap()) return "";
    const YAML::Node method = root["sweep"]["method"];
    return method && method.IsScalar() ? method.as<std::string>() : std::string("grid");
  } catch (const YAML::Exception&) {
    return "";
  }
}

// The sweep named `sweep`, or whose id it is; else Store::sweep_named's error.
SweepRow find(const Store& store, std::string_view sweep) {
  if (std::optional<SweepRow> row = store.find_sweep(sweep)) return *row;
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(sweep.data(), sweep.data() + sweep.size(), id);
  if (ec == std::errc() && end == sweep.data() + sweep.size())
    if (std::optional<SweepRow> row = store.find_sweep(id)) return *row;
  return store.sweep_named(sweep);  // throws, naming the sweeps the store holds
}

}  // namespace

ReportData load_report_data(const Store& store, std::string_view sweep) {
  const SweepRow row = find(store, sweep);
  ReportData data;
  data.name = row.name;
  data.config_yaml = row.config_yaml;
  data.config_path = row.config_path;
  data.metric_name = row.metric_name;
  data.goal = row.metric_goal;
  data.sweep_state = std::string(to_string(row.state));
  data.devices = row.devices;
  data.dataset = dataset_of(row.config_yaml);
  data.method = method_of(row.config_yaml);
  data.created_at = row.created_at;
  data.started_at = row.started_at;
  data.finished_at = row.finished_at;

  std::vector<TrialRow> trials = store.trials(row.id);
  data.trials.reserve(trials.size());
  std::unordered_map<std::int64_t, std::size_t> index_of_id;
  for (TrialRow& t : trials) {
    TrialData d;
    d.id = t.id;
    d.number = t.number;
    d.state = t.state;
    d.params = std::move(t.params);
    d.summary = std::move(t.summary);
    d.device = std::move(t.device);
    d.error = std::move(t.error);
    d.stop_reason = std::move(t.stop_reason);
    d.started_at = t.started_at;
    d.finished_at = t.finished_at;
    index_of_id.emplace(d.id, data.trials.size());
    data.trials.push_back(std::move(d));
  }

  // One pass over the sweep's metrics; points arrive grouped by trial and name, so the series
  // being appended to is cached between calls.
  std::int64_t current_trial = -1;
  std::string current_name;
  std::vector<SeriesPoint>* current = nullptr;
  store.for_each_metric(row.id, [&](const MetricPoint& p) {
    if (!current || p.trial_id != current_trial || p.name != current_name) {
      const auto it = index_of_id.find(p.trial_id);
      if (it == index_of_id.end()) {
        current = nullptr;
        return;
      }
      current_trial = p.trial_id;
      current_name = p.name;
      // An older store's name of a series read as today's (metric_names::series_name).
      current = &data.trials[it->second].series[std::string(metric_names::series_name(p.name))];
    }
    current->push_back({p.step, p.epoch.value_or(static_cast<double>(p.step)), p.value});
  });
  return data;
}

}  // namespace sweep::reports
