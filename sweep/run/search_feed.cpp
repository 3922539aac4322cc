/*
 * search_feed.cpp — see search_feed.h.
 */
#include "sweep/run/search_feed.h"

#include <cmath>

#include "common/check.h"
#include "sweep/config/expand.h"

namespace sweep::run {

bool trials_made_as_asked(const config::SweepConfig& config) {
  return config.sweep.method == "tpe";
}

config::TrialPoint point_of_row(const config::SweepConfig& config, const TrialRow& row) {
  if (!trials_made_as_asked(config))
    return config::trial_point(config, static_cast<std::uint64_t>(row.number));
  // The stored values as draws: a value of a categorical parameter is that value (its spelling
  // in the file is what a command placeholder gets), any other a drawn number.
  std::vector<config::Draw> draws;
  for (const config::ParamSpec& p : config.sweep.space.params) {
    if (!row.params.contains(p.name))
      throw Error("trial " + std::to_string(row.number) + " of sweep has no value for " + p.name +
                  ": the sweep's config no longer matches its trials");
    config::Draw draw;
    draw.value = row.params.at(p.name);
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (p.values[i] == draw.value) {
        draw.value_index = static_cast<int>(i);
        break;
      }
    draws.push_back(std::move(draw));
  }
  return config::trial_point_from_draws(config, static_cast<std::uint64_t>(row.number), draws);
}

namespace {

// The epoch a point is stored at (StoreSink's rule), so a live trace and one restored from the
// store see the same depths.
std::optional<double> stored_epoch(const scheduler::MetricPoint& point) {
  if (point.epoch > 0) return static_cast<double>(point.epoch);
  if (point.epoch_position > 0) return point.epoch_position;
  return std::nullopt;
}

}  // namespace

SearchFeed::SearchFeed(Store& store, std::int64_t sweep_id, const config::SweepConfig& config)
    : store_(store), sweep_id_(sweep_id), config_(config), sampler_(search::make_sampler(config)) {
  for (const TrialRow& row : store.trials(sweep_id)) {
    ++stored_;
    TrialScore score;
    for (const MetricPoint& m : store.trial_metrics(row.id))
      if (m.name == config.sweep.metric.name) score.add(m.step, m.value, goal(), m.epoch);
    sampler_->restore(point_of_row(config, row), search_result(score, row.state));
  }
}

MetricGoal SearchFeed::goal() const {
  return config_.sweep.metric.maximize() ? MetricGoal::maximize : MetricGoal::minimize;
}

std::optional<search::TrialResult> search_result(const TrialScore& score, TrialState state) {
  search::TrialResult result;
  // The depth it reached: the epoch of its last point, else that point's step.
  result.depth =
      static_cast<int>(score.last_epoch ? static_cast<std::int64_t>(std::floor(*score.last_epoch))
                                        : score.last_step);
  switch (state) {
    case TrialState::completed:
      result.outcome = search::TrialOutcome::complete;
      if (score.best) result.value = *score.best;
      return result;
    case TrialState::stopped_early:
    case TrialState::cancelled:
      result.outcome = search::TrialOutcome::pruned;
      if (score.last) result.value = *score.last;
      return result;
    case TrialState::failed:
    case TrialState::diverged:
      result.outcome = search::TrialOutcome::failed;
      return result;
    default:  // queued, running, interrupted: it will run (again)
      return std::nullopt;
  }
}

std::optional<TrialRow> SearchFeed::next() {
  std::optional<config::TrialPoint> point;
  {
    std::lock_guard lock(mutex_);
    point = sampler_->ask();
  }
  if (!point) return std::nullopt;
  TrialSpec spec;
  spec.number = point->number;
  spec.params = point->params;
  spec.seed = static_cast<std::int64_t>(point->seed);
  spec.repeat = point->repeat;
  store_.add_trials(sweep_id_, std::span<const TrialSpec>(&spec, 1));
  ++stored_;
  std::optional<TrialRow> row = store_.trial_by_number(sweep_id_, spec.number);
  if (!row) throw Error("the sweep database lost trial " + std::to_string(spec.number));
  return row;
}

std::uint64_t SearchFeed::remaining() const {
  const std::uint64_t capacity = sampler_->capacity();
  return capacity > stored_ ? capacity - stored_ : 0;
}

void SearchFeed::on_metric(std::int64_t trial_number, const scheduler::MetricPoint& point) {
  if (point.name != config_.sweep.metric.name) return;
  std::lock_guard lock(mutex_);
  scores_[trial_number].add(point.step, point.value, goal(), stored_epoch(point));
}

void SearchFeed::finished(std::int64_t trial_number, TrialState state) {
  std::lock_guard lock(mutex_);
  const std::optional<search::TrialResult> result = search_result(scores_[trial_number], state);
  if (result) sampler_->tell(static_cast<std::uint64_t>(trial_number), *result);
  scores_.erase(trial_number);
}

}  // namespace sweep::run
