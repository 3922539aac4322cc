/*
 * tpe_sampler.h — the Tree-structured Parzen Estimator (Optuna's default sampler), what
 * `method: tpe` and `method: bayes` run.
 *
 * Each suggestion: split the trials told so far into the best gamma(n) ("good") and the rest
 * ("bad", with every pending trial: the constant liar), fit a Parzen density to each (l and g),
 * draw n_ei_candidates points from l and keep the one with the highest l/g. Until
 * n_startup_trials trials have been told, suggestions are random search's own draws
 * (config::sample_point with the same seed: a tpe sweep starts exactly as the random sweep of
 * that seed). A suggestion never repeats a point already asked or restored while the draws find
 * another (grid parameters can run out of points; then it may).
 *
 * Deterministic: suggestion k draws from a generator seeded by (seed, k) (std::mt19937_64, our
 * own conversions), so the same space, seed and sequence of ask/tell calls give the same points
 * (another C library's exp and log may differ in the last bit, and so a suggestion).
 *
 * Its defaults are Optuna 3.1's TPESampler defaults (univariate kernels, each parameter modelled
 * on its own; continuous kernels scored without their 1/sigma, as Optuna before 3.5 scored them,
 * optuna#5109): on bench/search this, not multivariate kernels nor the true density, is what
 * matches Optuna 3.1 (bench/RESULTS.md, "Search quality"). The estimator gives 3.1's
 * log-densities to 1e-10 (parzen_estimator_test). multivariate and width_weighted_density=false
 * (the true density, as Optuna >= 3.5) remain options. Where it differs from Optuna 3.1, and why:
 *  - failed and NaN trials are observations, the worst ones (Optuna ignores them), so the model
 *    steers away from where trials fail;
 *  - a suggestion is never a point already asked while another can be found (Optuna may repeat
 *    a point of a small grid), and the constant liar is on by default;
 *  - W&B's distributions: the normal family is modelled through its own CDF (search_dimension.h),
 *    q distributions on random search's grid, categorical probabilities as the prior.
 *
 * Without a SweepConfig (the bench, a library user):
 *
 *   sweep::config::SearchSpace space;   // ParamSpec per parameter, as the config reader fills
 *   sweep::search::TpeSampler tpe(space, {}, false, 42, 100);   // minimize, seed 42, 100 trials
 *   while (auto point = tpe.ask())
 *     tpe.tell(point->number, {search::TrialOutcome::complete, f(point->params), 1});
 */
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "sweep/config/search_space.h"
#include "sweep/search/parzen_estimator.h"
#include "sweep/search/sampler.h"
#include "sweep/search/search_dimension.h"
#include "sweep/search/trial_numbers.h"

namespace sweep::search {

// Optuna 3.1's TPESampler defaults (univariate kernels, scored as 3.1 scores them), except
// constant_liar, which is on.
struct TpeOptions {
  int n_startup_trials = 10;  // told trials before the model is used (random draws until then)
  int n_ei_candidates = 24;   // draws from l per suggestion
  double prior_weight = 1.0;
  bool consider_magic_clip = true;
  bool consider_endpoints = false;  // univariate kernel widths only
  bool multivariate = false;        // joint kernels (else each parameter on its own)
  bool constant_liar = true;        // pending trials count as the worst
  // Continuous kernels scored without their 1/sigma, as Optuna before 3.5 (optuna#5109).
  bool width_weighted_density = true;
  // gamma(n) = min(ceil(gamma_fraction · n), gamma_cap) told trials are good.
  double gamma_fraction = 0.1;
  int gamma_cap = 25;
};

// How trials are laid out around suggestions: each suggestion runs `repeats` times (numbers
// k·repeats ... k·repeats + repeats − 1, repeat fastest, as grid and random), with training
// seed base_training_seed + repeat unless training.seed is swept (then that value + repeat).
struct TrialLayout {
  int repeats = 1;
  std::uint64_t base_training_seed = 0;
};

class TpeSampler final : public Sampler {
 public:
  // Throws sweep::Error for a parameter with nothing to search (min >= max of a continuous
  // distribution, a categorical without values). `max_trials`: suggestions (capacity() is
  // max_trials × repeats).
  TpeSampler(const config::SearchSpace& space, TpeOptions options, bool maximize,
             std::uint64_t seed, std::uint64_t max_trials, TrialLayout layout = {});

  std::optional<config::TrialPoint> ask() override;
  // Throws sweep::Error for a number never asked nor restored.
  void tell(std::uint64_t number, const TrialResult& result) override;
  void restore(const config::TrialPoint& point, const std::optional<TrialResult>& result) override;
  std::uint64_t capacity() const override { return max_trials_ * layout_.repeats; }

  // Told trials (any outcome): the model is used from options.n_startup_trials on.
  std::size_t told() const { return told_; }

 private:
  struct Suggestion {                 // one point, run `repeats` times
    std::vector<config::Draw> draws;  // per parameter of the space
    std::vector<double> coordinates;  // per dimension (SearchDimension::encode)
    bool modelled = true;             // every value encodes (a restored point may not)
  };
  struct Trial {
    std::uint64_t suggestion = 0;
    std::optional<TrialResult> result;  // nullopt: pending
  };

  std::vector<config::Draw> suggest(std::uint64_t index);
  std::optional<std::vector<config::Draw>> model_draw(config::UnitRng& rng);
  Suggestion make_suggestion(std::vector<config::Draw> draws) const;
  std::vector<double> point_key(const std::vector<config::Draw>& draws) const;
  bool is_new(const std::vector<config::Draw>& draws) const;
  void remember(std::uint64_t index, Suggestion suggestion);

  config::SearchSpace space_;
  std::vector<SearchDimension> dims_;  // the parameters that are not constant
  TpeOptions options_;
  bool maximize_ = false;
  std::uint64_t seed_ = 0;
  std::uint64_t max_trials_ = 0;
  TrialLayout layout_;
  TrialNumbers numbers_;
  std::map<std::uint64_t, Suggestion> suggestions_;  // by suggestion index (number / repeats)
  std::map<std::uint64_t, Trial> trials_;            // by trial number: asked or restored
  std::set<std::vector<double>> points_;             // point_key of every suggestion
  std::size_t told_ = 0;
};

}  // namespace sweep::search
