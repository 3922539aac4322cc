/*
 * stopping_policy.h — early stopping *across* trials (patience inside one trial is the trainer's).
 *
 * A policy sees every metric point of every trial (from the trials' own threads, concurrently) and
 * answers continue or stop-with-reason for the trial that reported. Policies only look at points
 * whose name is their metric and whose epoch is >= 1; NaN / Inf values are ignored (a diverging
 * trial is the trainer's business). The executor turns a stop into StopKind::early_stop and the
 * trial ends `stopped_early` with the reason as its message. Every policy is thread-safe.
 *
 *   auto policy = make_stopping_policy({{"type", "asha"}, {"min_epochs", 1}, {"eta", 3}},
 *                                      "val_accuracy", MetricGoal::maximize);
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/json.h"
#include "common/trial_score.h"
#include "scheduler/metric_point.h"

namespace sweep::scheduler {

// Which way the metric improves: the one goal of common/trial_score.h.
using MetricGoal = sweep::MetricGoal;
// "maximize" / "minimize"; throws sweep::Error otherwise.
MetricGoal parse_metric_goal(const std::string& text);

struct StopDecision {
  bool stop = false;
  std::string reason;  // set when stop: "median: ...", "asha: rung 1 (epoch 3) not in top 1/3 ..."

  static StopDecision keep_going() { return {}; }
  static StopDecision stop_because(std::string why) { return {true, std::move(why)}; }
};

class StoppingPolicy {
 public:
  virtual ~StoppingPolicy() = default;
  // Thread-safe. Called for every metric point of every trial.
  virtual StopDecision observe(std::int64_t trial_id, const MetricPoint& point) = 0;
  // One line for logs and the report: "asha(val_accuracy max, min_epochs=1, eta=3)".
  virtual std::string describe() const = 0;
};

// Builds a policy from a sweep's `early_terminate` block (already parsed from YAML into JSON):
//   {type: median, min_epochs (grace, default 1), min_trials (default 3)}
//   {type: asha, min_epochs (default 1), eta (default 3), max_epochs (default 0 = no cap)}
//   {type: hyperband, min_iter, eta (default 3)}, or {type: hyperband, max_iter, s, eta} — W&B's
//    two forms (bands min_iter*eta^k, or max_iter/eta^i for i = 1..s); see hyperband.h
// Unknown types and keys throw sweep::Error naming the key and the accepted ones.
std::unique_ptr<StoppingPolicy> make_stopping_policy(const sweep::Json& early_terminate,
                                                     const std::string& metric, MetricGoal goal);

}  // namespace sweep::scheduler
