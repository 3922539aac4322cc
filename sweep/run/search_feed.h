/*
 * search_feed.h — a search that learns (tpe) as the run loop's source of trials.
 *
 * Grid and random sweeps store every trial up front. A tpe sweep cannot: trial k's values depend
 * on the results of the trials before it. Its rows are made one at a time, when a slot frees
 * (next()), from the sampler's suggestion; every point of the sweep's metric a trial reports goes
 * into its TrialScore (common/trial_score.h; on_metric, from the trial's thread) and, when it ends,
 * is reduced to what the sampler is told (finished()):
 *   completed               → complete, its best value of the sweep's metric (as `best` ranks)
 *   stopped early, cancelled → pruned, its last value (NaN or infinite: ranked with the failed)
 *                              at the depth (the epoch of that point) it reached
 *   failed, diverged        → failed (ranked worst)
 *   interrupted             → nothing: it runs again on resume, so it stays pending
 * Resume builds the same sampler from the stored rows and their metrics (restore), so a resumed
 * tpe sweep goes on from the model it had, without repeating a finished point.
 *
 * Thread-safe: on_metric comes from trial threads, the rest from the run loop.
 */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/trial_score.h"
#include "scheduler/metric_point.h"
#include "store/store.h"
#include "sweep/config/config.h"
#include "sweep/search/sampler.h"

namespace sweep::run {

// True when the sweep's trials come from a sampler as it goes (tpe), not from a list made up front.
bool trials_made_as_asked(const config::SweepConfig& config);

// The point a stored row stands for: grid and random recompute it from the config (trial_point);
// a tpe row's values came from the sampler, so they are read back from the row.
config::TrialPoint point_of_row(const config::SweepConfig& config, const TrialRow& row);

// What the sampler is told of a trial that ended in `state` with `score` on the sweep's metric (the
// table above; depth: the epoch of its last point, else that point's step); nullopt for a trial
// that runs again.
std::optional<search::TrialResult> search_result(const TrialScore& score, TrialState state);

class SearchFeed {
 public:
  // Restores every trial already in the store (finished ones with their results; others pending).
  SearchFeed(Store& store, std::int64_t sweep_id, const config::SweepConfig& config);

  // The next trial's row, stored queued; nullopt when the search has asked all it may.
  std::optional<TrialRow> next();
  // How many trials the search may still make (capacity less the rows stored).
  std::uint64_t remaining() const;

  void on_metric(std::int64_t trial_number, const scheduler::MetricPoint& point);
  void finished(std::int64_t trial_number, TrialState state);

 private:
  MetricGoal goal() const;

  Store& store_;
  std::int64_t sweep_id_;
  const config::SweepConfig& config_;
  std::unique_ptr<search::Sampler> sampler_;
  std::uint64_t stored_ = 0;
  mutable std::mutex mutex_;
  std::map<std::int64_t, TrialScore> scores_;  // by trial number, while it runs
};

}  // namespace sweep::run
