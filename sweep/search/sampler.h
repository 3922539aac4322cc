/*
 * sampler.h — a sweep's search method behind one ask/tell interface: grid, random and tpe.
 *
 * The run loop asks for a trial when a slot frees and tells the sampler every result. Grid and
 * random ignore what they are told (they produce exactly the trials config::trial_point gives,
 * same order, same seeds); tpe (Tree-structured Parzen Estimator, Optuna's default, also what
 * `method: bayes` runs) models the finished trials and suggests where the good ones are.
 *
 * Not thread-safe: one thread (the run loop) asks and tells. Deterministic: the same config,
 * seed and sequence of ask/tell calls give the same suggestions. A point's values are resolved
 * into a full trial config with config::resolve_trial(config, point, diagnostics), as for grid.
 *
 * repeats > 1: trial numbers k·repeats ... k·repeats + repeats − 1 are one point (repeat
 * fastest, seeds training.seed + repeat), as config::trial_point lays them out; tpe counts every
 * repeat's result as an observation.
 *
 *   auto config = sweep::config::load_config("sweep.yaml");
 *   auto sampler = sweep::search::make_sampler(config);
 *   while (auto point = sampler->ask()) {
 *     const double value = train_and_evaluate(*point);           // the metric
 *     sampler->tell(point->number, {search::TrialOutcome::complete, value, epochs});
 *   }
 */
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>

#include "sweep/config/config.h"
#include "sweep/config/expand.h"

namespace sweep::search {

// How a trial ended, as a search method sees it.
enum class TrialOutcome {
  complete,  // ran every epoch: `value` is its final metric
  pruned,    // stopped early (patience, median, ASHA, hyperband, cancelled): `value` is the last
             // metric it reported, at `depth`; ranked below trials that went deeper
  failed,    // failed, diverged, timed out: ranked as the worst
};

struct TrialResult {
  TrialOutcome outcome = TrialOutcome::complete;
  double value = std::numeric_limits<double>::quiet_NaN();  // NaN: no metric (ranked worst)
  int depth = 0;  // epochs (or report steps) the trial reached
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The next trial to run: the lowest number never asked nor restored (0, 1, 2, ... on a fresh
  // sweep); nullopt when that number reaches capacity(). A trial asked and not yet told is
  // pending: tpe counts it as bad ("constant liar") and never suggests a point it has already
  // suggested while another can be found, so concurrent asks give different points.
  virtual std::optional<config::TrialPoint> ask() = 0;
  // The result of trial `number` (asked before, or restored). Telling twice replaces. Grid and
  // random ignore it; tpe throws sweep::Error for a number it never handed out nor restored.
  virtual void tell(std::uint64_t number, const TrialResult& result) = 0;
  // Resume: a trial of an earlier run, with its stored values (point.params; number, repeat and
  // params are read) and, when it ended, its result (nullopt: the run loop runs it again and
  // tells its result then; until then tpe counts it as pending). Restore every earlier trial
  // before the first ask(): ask() never gives a restored number again (it fills gaps below the
  // highest, lowest first, then goes on after it). A tpe point whose stored values are no longer
  // in its space (a category removed from the file) keeps its number but is not modelled.
  virtual void restore(const config::TrialPoint& point,
                       const std::optional<TrialResult>& result) = 0;
  // How many trials the sweep has at most (grid size × repeats, or max_trials).
  virtual std::uint64_t capacity() const = 0;
};

// The sampler of config.sweep.method (grid | random | tpe; `bayes` is read as tpe).
std::unique_ptr<Sampler> make_sampler(const config::SweepConfig& config);

}  // namespace sweep::search
