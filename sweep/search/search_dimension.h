/*
 * search_dimension.h — one swept parameter as the TPE model sees it: a number on an interval
 * of "model coordinates", or one choice among k.
 *
 * The model coordinate of each distribution (a value's cell is the interval of coordinates
 * that round to it, the "half a step" each side of Optuna's int/step distributions):
 *
 *   uniform                   the value                 on [min, max]
 *   int_uniform, q_uniform    the value                 on [lo − q/2, hi + q/2], cells of width q
 *   log_uniform               log(value)                on [min, max] (W&B: exponents)
 *   log_uniform_values        log(value)                on [log min, log max]
 *   q_log_uniform(_values)    log(value)                on [log(lo − q/2), log(hi + q/2)], cells
 *   normal, log_normal        Φ((x − mu)/sigma), x = value or log(value)   on [0, 1]
 *   q_normal, q_log_normal    the same, cells           on [0, 1]
 *   categorical               the index of the value    (the probabilities are the prior)
 *   constant                  not modelled
 *
 * lo and hi are the smallest and largest multiples of q that random search can draw
 * (round(min/q)·q and round(max/q)·q): TPE's values are always values random search could have
 * drawn, rounded the same way and of the same type (an integer q gives integers).
 *
 * The normal family is unbounded; it is modelled through its own CDF, so the interval is [0, 1],
 * the prior density is flat there, and a kernel can reach any value (to Φ⁻¹(1e-12), 7 sigma).
 */
#pragma once

#include <optional>
#include <vector>

#include "common/json.h"
#include "sweep/config/search_space.h"

namespace sweep::search {

// An interval of model coordinates; lo == hi is a point (a continuous value).
struct Cell {
  double lo = 0, hi = 0;
};

class SearchDimension {
 public:
  // The dimension of `param` (index `param_index` in the space), or nullopt for a constant.
  // Throws sweep::Error when the parameter has nothing to search (min >= max, no values).
  static std::optional<SearchDimension> of(const config::ParamSpec& param, std::size_t param_index);

  std::size_t param_index() const { return param_index_; }
  bool categorical() const { return categorical_; }
  // Numeric: values are a grid (a value's density is the kernel's mass over its cell).
  bool discrete() const { return discrete_; }
  // Numeric: the interval of model coordinates the kernels live on.
  double low() const { return low_; }
  double high() const { return high_; }
  // Categorical: the prior weight of each choice (sums to 1).
  const std::vector<double>& prior() const { return prior_; }

  // A stored value → its model coordinate (categorical: its index), clamped onto the interval;
  // nullopt when it is not a value of this parameter (a category no longer listed, a string).
  std::optional<double> encode(const sweep::Json& value) const;
  // A model coordinate (from a kernel draw) → the value the trial runs with: rounded onto the
  // grid, inside the support, typed as random search would type it.
  config::Draw decode(double coordinate) const;
  // Where a decoded value is evaluated: its cell (discrete), its coordinate (continuous), its
  // index (categorical; lo == hi).
  Cell cell(const config::Draw& draw) const;

 private:
  double to_coordinate(double value) const;  // numeric value → coordinate (not clamped)
  double quantized(double k) const;          // k·q as the value random search would give

  config::ParamSpec param_;
  std::size_t param_index_ = 0;
  bool categorical_ = false;
  bool discrete_ = false;
  bool log_ = false;     // coordinate of a uniform kind is log(value)
  bool normal_ = false;  // coordinate is the prior's CDF
  double low_ = 0, high_ = 1;
  double k_low_ = 0, k_high_ = 0;  // quantized: the support is k·q, k in [k_low_, k_high_]
  std::vector<double> prior_;
};

}  // namespace sweep::search
