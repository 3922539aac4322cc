/*
 * search_space.h — sweep.parameters: W&B's distributions, with W&B's meanings.
 *
 * `log_uniform` takes natural-log EXPONENTS as min/max (exp(uniform(min, max))), while
 * `log_uniform_values` takes the values themselves — W&B's naming, kept exactly so a W&B sweep's
 * parameters block works unchanged. q_* distributions round to a multiple of q (half to even, as
 * numpy's round), and yield integers when q is written as an integer. When `distribution` is
 * omitted it is inferred as W&B does: values → categorical, value → constant, integer min/max →
 * int_uniform, other min/max → uniform.
 *
 * Sampling is ours, not <random>'s distributions (whose algorithms the standard leaves open): a
 * trial's draws come from std::mt19937_64 (fully specified) seeded by (sweep seed, trial index),
 * so trial k's parameters do not depend on max_trials or on the library.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/json.h"
#include "sweep/config/config_error.h"

namespace sweep::config {

enum class Distribution {
  categorical,
  constant,
  uniform,
  int_uniform,
  q_uniform,
  log_uniform,
  log_uniform_values,
  q_log_uniform,
  q_log_uniform_values,
  normal,
  q_normal,
  log_normal,
  q_log_normal,
};

const char* to_string(Distribution d);
std::optional<Distribution> parse_distribution(const std::string& name);
std::vector<std::string> distribution_names();

struct ParamSpec {
  std::string name;             // dotted key ("training.learning_rate") or,
                                // for external trainers, a free name ("lr")
  bool sets_config_key = true;  // false: only a {placeholder} for the command
  Distribution distribution = Distribution::categorical;
  std::vector<sweep::Json> values;    // categorical (constant: one)
  std::vector<double> probabilities;  // categorical, random search only; empty = equal
  double min = 0, max = 0;
  double q = 1;
  bool integer_q = false;  // q written as an integer: q_* yield integers
  double mu = 0, sigma = 1;
  Location where;                         // the parameter's key in sweep.parameters
  std::vector<Location> value_locations;  // one per entry of `values`
  // One per entry of `values`: the value as the file spells it (010, 1.0, .nan, 1e-3), which is
  // what an external command's {placeholder} receives; lists and maps in flow YAML.
  std::vector<std::string> value_texts;

  bool is_discrete() const {
    return distribution == Distribution::categorical || distribution == Distribution::constant;
  }
};

struct SearchSpace {
  std::vector<ParamSpec> params;  // in the file's order

  // Number of grid points (the product of the value counts); requires every param discrete.
  std::uint64_t grid_size() const;
  // Indices into each param's values for grid point `point` (the last param varies fastest).
  std::vector<std::size_t> grid_point(std::uint64_t point) const;
};

// One random draw per parameter, for trial `index` (0-based) of a random search seeded `seed`.
// Returns (value, index into values or -1) per parameter.
struct Draw {
  sweep::Json value;
  int value_index = -1;
};
std::vector<Draw> sample_point(const SearchSpace& space, std::uint64_t seed, std::uint64_t index);

// Uniform and normal draws from std::mt19937_64 with our own conversions; exposed for the
// distribution tests.
class UnitRng {
 public:
  explicit UnitRng(std::uint64_t seed) : engine_(seed) {}
  double uniform();  // [0, 1), 53 random bits
  double normal();   // mean 0, sd 1 (Box-Muller)

 private:
  std::mt19937_64 engine_;
};
Draw sample_param(const ParamSpec& param, UnitRng& rng);

}  // namespace sweep::config
