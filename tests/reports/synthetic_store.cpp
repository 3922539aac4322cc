/*
 * synthetic_store.cpp — see synthetic_store.h.
 *
 * The non-obvious decision: trials still queued or running in the ReportData are left so in the
 * store (not claimed / not finished), so a test can load a sweep that is still in progress.
 */
#include "tests/reports/synthetic_store.h"

#include <vector>

namespace sweep::reports::testing {

std::int64_t store_sweep(Store& store, const ReportData& data, std::size_t batch_points) {
  SweepSpec spec;
  spec.name = data.name;
  spec.config_yaml = data.config_yaml;
  spec.config_path = data.config_path;
  spec.metric_name = data.metric_name;
  spec.metric_goal = data.goal == Goal::maximize ? MetricGoal::maximize : MetricGoal::minimize;
  spec.devices = data.devices;
  const std::int64_t sweep_id = store.create_sweep(spec);

  std::vector<TrialSpec> specs;
  specs.reserve(data.trials.size());
  for (const TrialData& t : data.trials) {
    TrialSpec s;
    s.number = t.number;
    s.params = t.params;
    specs.push_back(std::move(s));
  }
  const std::vector<std::int64_t> ids = store.add_trials(sweep_id, specs);
  store.set_sweep_state(sweep_id, SweepState::running);

  std::vector<MetricPoint> batch;
  batch.reserve(batch_points);
  auto flush = [&] {
    store.log_metrics(batch);
    batch.clear();
  };
  for (std::size_t i = 0; i < data.trials.size(); ++i) {
    const TrialData& t = data.trials[i];
    if (t.state == TrialState::queued) continue;
    store.claim_trial(ids[i], t.device.empty() ? "cpu:0" : t.device);
    for (const auto& [name, points] : t.series) {
      for (const SeriesPoint& p : points) {
        batch.push_back({ids[i], name, p.step, p.epoch, p.value, 1'700'000'000.0 + p.epoch});
        if (batch.size() >= batch_points) flush();
      }
    }
    if (t.state == TrialState::running) continue;
    TrialUpdate update;
    update.summary = t.summary;
    if (!t.error.empty()) update.error = t.error;
    if (!t.stop_reason.empty()) update.stop_reason = t.stop_reason;
    flush();  // metrics before the final state, as a real trial reports them
    store.set_trial_state(ids[i], t.state, update);
  }
  flush();
  store.set_sweep_state(sweep_id, SweepState::completed);
  return sweep_id;
}

}  // namespace sweep::reports::testing
