/*
 * objectives.h — the search benchmark's objectives, as sweep's side sees them.
 *
 * Six functions to minimise, each with its search space written as sweep's ParamSpecs. The same
 * objectives, term for term, are in objectives.py for Optuna's side (both use the C library's
 * exp/log10/cos, so one point gives one value: `bench_search --check` prints points and values,
 * `optuna_search.py check` re-evaluates them).
 *
 *   sphere5      sum x_i^2, x in [-5, 5]^5                               min 0 at 0
 *   rosenbrock5  sum 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, [-2.048, 2.048]^5   min 0 at 1
 *   branin       x0 in [-5, 10], x1 in [0, 15]                           min 0.397887
 *   hartmann6    x in [0, 1]^6                                           min -3.32237
 *   lr_noisy     lr log_uniform_values [1e-6, 1]: a loss curve in log10(lr) around 3e-3, steeper
 *                above it, plus 0.02 × a standard normal drawn from (run seed, trial number)
 *   mixed        optimizer categorical {sgd, adam, rmsprop} + layers int_uniform [1, 8] + lr
 *                log_uniform_values [1e-5, 1e-1]; min 0 at (adam, 3, 1e-3)
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/json.h"
#include "sweep/config/search_space.h"

namespace sweep::bench {

struct Objective {
  std::string name;
  config::SearchSpace space;
  // The value a sampler is told for trial `trial` of a run seeded `seed` (params: name → value).
  double (*value)(const Json& params, std::uint64_t seed, std::uint64_t trial);
  // The noise-free value (the same as `value` for every objective but lr_noisy).
  double (*clean)(const Json& params);
};

// All six, in the order above.
const std::vector<Objective>& objectives();
// The objective called `name`; throws std::invalid_argument naming the known ones.
const Objective& objective(const std::string& name);

// A standard normal from (seed, trial) only: splitmix64 → two 53-bit uniforms → Box-Muller.
double bench_noise(std::uint64_t seed, std::uint64_t trial);

}  // namespace sweep::bench
