/*
 * trial_score.h — a trial's score on the sweep's metric and the rule that ranks trials by it.
 * The one definition that the store (Store::best_trial, export), the report, the search feed, the
 * console table and `sweep serve` (through the store) read; none of them compares values itself.
 *
 * The rules:
 *  - best: the best finite value of the trial's points (the largest when maximizing, the smallest
 *    when minimizing); NaN and infinities never count. Among equal values the earliest step holds
 *    it, so a trial that peaked at epoch 6 and then overfit keeps its peak and where it was.
 *  - last: the value at the highest step, whatever it is (NaN and infinities included: a run that
 *    diverged ends there); a point reported again at the same step replaces it, as the store's
 *    upsert does.
 *  - ranking (ranks_before): a trial with a best value before one without; then one that did not
 *    break (is_broken: failed, diverged — its values before it broke are kept, but it is no result
 *    to pick) before one that did; then the better best value; then the earlier best step; then
 *    the lower trial number.
 */
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>

#include "common/trial_state.h"

namespace sweep {

// Which way the sweep's metric improves.
enum class MetricGoal { maximize, minimize };

// True when `a` is strictly better than `b` under `goal` (equal values are not).
constexpr bool is_better(double a, double b, MetricGoal goal) {
  return goal == MetricGoal::maximize ? a > b : a < b;
}

// One trial's score on one metric, built point by point; points may come in any order of steps.
struct TrialScore {
  std::optional<double> best;  // best finite value (nullopt: no finite point)
  std::int64_t best_step = 0;
  std::optional<double> best_epoch;
  std::optional<double> last;  // value at the highest step (may be non-finite; nullopt: no point)
  std::int64_t last_step = 0;
  std::optional<double> last_epoch;

  void add(std::int64_t step, double value, MetricGoal goal,
           std::optional<double> epoch = std::nullopt) {
    if (std::isfinite(value) &&
        (!best || is_better(value, *best, goal) || (value == *best && step < best_step))) {
      best = value;
      best_step = step;
      best_epoch = epoch;
    }
    if (!last || step >= last_step) {
      last = value;
      last_step = step;
      last_epoch = epoch;
    }
  }
};

// What the ranking reads of a trial.
struct RankedTrial {
  std::optional<double> best;
  std::int64_t best_step = 0;
  std::int64_t number = 0;  // the trial's number in its sweep
  bool broken = false;      // is_broken(state)
};

constexpr RankedTrial ranked(const TrialScore& score, std::int64_t number, TrialState state) {
  return {score.best, score.best_step, number, is_broken(state)};
}

// True when trial `a` ranks ahead of trial `b` (the rule above); a strict weak order.
constexpr bool ranks_before(const RankedTrial& a, const RankedTrial& b, MetricGoal goal) {
  if (!a.best) return false;
  if (!b.best) return true;
  if (a.broken != b.broken) return b.broken;
  if (is_better(*a.best, *b.best, goal)) return true;
  if (is_better(*b.best, *a.best, goal)) return false;
  if (a.best_step != b.best_step) return a.best_step < b.best_step;
  return a.number < b.number;
}

}  // namespace sweep
