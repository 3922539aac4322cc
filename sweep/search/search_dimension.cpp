/*
 * search_dimension.cpp — each distribution's model coordinate, support and rounding.
 */
#include "sweep/search/search_dimension.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/check.h"
#include "sweep/search/truncated_normal.h"

namespace sweep::search {

namespace {

using config::Distribution;

// The normal family's CDF coordinate stays this far inside (0, 1): Φ⁻¹ of it is ±7.03.
constexpr double kCdfMargin = 1e-12;

bool is_log_uniform_kind(Distribution d) {
  return d == Distribution::log_uniform || d == Distribution::log_uniform_values ||
         d == Distribution::q_log_uniform || d == Distribution::q_log_uniform_values;
}

bool is_normal_kind(Distribution d) {
  return d == Distribution::normal || d == Distribution::q_normal ||
         d == Distribution::log_normal || d == Distribution::q_log_normal;
}

bool takes_log_of_value(Distribution d) {
  return is_log_uniform_kind(d) || d == Distribution::log_normal || d == Distribution::q_log_normal;
}

bool is_grid(Distribution d) {
  return d == Distribution::int_uniform || d == Distribution::q_uniform ||
         d == Distribution::q_log_uniform || d == Distribution::q_log_uniform_values ||
         d == Distribution::q_normal || d == Distribution::q_log_normal;
}

[[noreturn]] void nothing_to_search(const config::ParamSpec& p, const std::string& why) {
  throw Error("parameter " + p.name + " (" + config::to_string(p.distribution) + "): " + why);
}

}  // namespace

std::optional<SearchDimension> SearchDimension::of(const config::ParamSpec& param,
                                                   std::size_t param_index) {
  if (param.distribution == Distribution::constant) return std::nullopt;
  SearchDimension d;
  d.param_ = param;
  d.param_index_ = param_index;
  const config::ParamSpec& p = d.param_;
  if (p.distribution == Distribution::categorical) {
    if (p.values.empty()) nothing_to_search(p, "no values to choose from");
    d.categorical_ = true;
    const auto k = p.values.size();
    d.prior_.assign(k, 1.0 / static_cast<double>(k));
    if (p.probabilities.size() == k) {
      double sum = 0;
      for (double w : p.probabilities) sum += w;
      if (sum > 0)
        for (std::size_t i = 0; i < k; ++i) d.prior_[i] = p.probabilities[i] / sum;
    }
    d.low_ = 0;
    d.high_ = static_cast<double>(k - 1);
    return d;
  }
  d.discrete_ = is_grid(p.distribution);
  d.log_ = is_log_uniform_kind(p.distribution);
  d.normal_ = is_normal_kind(p.distribution);
  const double q = p.distribution == Distribution::int_uniform ? 1.0 : p.q;
  if (d.discrete_ && !(q > 0)) nothing_to_search(p, "q must be > 0");
  if (d.normal_) {
    if (!(p.sigma > 0)) nothing_to_search(p, "sigma must be > 0");
    d.low_ = 0;
    d.high_ = 1;
    d.k_low_ = p.distribution == Distribution::q_log_normal ? 0 : -kInf;
    d.k_high_ = kInf;
    return d;
  }
  if (!(p.max >= p.min)) nothing_to_search(p, "max must be >= min");
  // The interval the draws come from, as values (log_uniform: exponents → values).
  const bool exponents =
      p.distribution == Distribution::log_uniform || p.distribution == Distribution::q_log_uniform;
  const double raw_low = exponents ? std::exp(p.min) : p.min;
  const double raw_high = exponents ? std::exp(p.max) : p.max;
  if (!d.discrete_) {
    if (!(p.max > p.min)) nothing_to_search(p, "tpe needs max > min");
    d.low_ = d.log_ ? std::log(raw_low) : raw_low;
    d.high_ = d.log_ ? std::log(raw_high) : raw_high;
    return d;
  }
  d.k_low_ = std::nearbyint(raw_low / q);
  d.k_high_ = std::nearbyint(raw_high / q);
  const double half = q / 2;
  if (d.log_) {
    const double widened_low = d.k_low_ * q - half;
    d.low_ = widened_low > 0 ? std::log(widened_low) : std::log(raw_low);
    d.high_ = std::log(d.k_high_ * q + half);
  } else {
    d.low_ = d.k_low_ * q - half;
    d.high_ = d.k_high_ * q + half;
  }
  if (!(d.high_ > d.low_)) nothing_to_search(p, "the interval holds no value");
  return d;
}

double SearchDimension::to_coordinate(double value) const {
  if (takes_log_of_value(param_.distribution)) value = value > 0 ? std::log(value) : -kInf;
  if (normal_) return normal_cdf((value - param_.mu) / param_.sigma);
  return value;
}

double SearchDimension::quantized(double k) const {
  const double q = param_.distribution == Distribution::int_uniform ? 1.0 : param_.q;
  return k * q;  // the same expression as random search's round(x / q) * q
}

std::optional<double> SearchDimension::encode(const sweep::Json& value) const {
  if (categorical_) {
    for (std::size_t i = 0; i < param_.values.size(); ++i)
      if (param_.values[i] == value) return static_cast<double>(i);
    return std::nullopt;
  }
  if (!value.is_number()) return std::nullopt;
  const double x = value.get<double>();
  if (std::isnan(x)) return std::nullopt;
  const double coordinate = to_coordinate(x);
  if (normal_) return std::clamp(coordinate, kCdfMargin, 1 - kCdfMargin);
  return std::clamp(coordinate, low_, high_);
}

config::Draw SearchDimension::decode(double coordinate) const {
  if (categorical_) {
    const auto last = static_cast<double>(param_.values.size() - 1);
    const auto index = static_cast<std::size_t>(std::clamp(std::nearbyint(coordinate), 0.0, last));
    return {param_.values[index], static_cast<int>(index)};
  }
  double x = 0;  // the drawn value, before rounding onto the grid
  if (normal_) {
    const double u = std::clamp(coordinate, kCdfMargin, 1 - kCdfMargin);
    x = param_.mu + param_.sigma * normal_quantile(u);
    if (takes_log_of_value(param_.distribution)) x = std::exp(x);
  } else {
    x = std::clamp(coordinate, low_, high_);
    if (log_) x = std::exp(x);
  }
  if (!discrete_) {
    // exp(log(min)) may miss min by an ulp: the value stays inside what was asked for.
    if (param_.distribution == Distribution::log_uniform_values)
      x = std::clamp(x, param_.min, param_.max);
    return {x};
  }
  const double q = param_.distribution == Distribution::int_uniform ? 1.0 : param_.q;
  const double k = std::clamp(std::nearbyint(x / q), k_low_, k_high_);
  const double value = quantized(k);
  const bool integer = param_.distribution == Distribution::int_uniform || param_.integer_q;
  if (integer) return {static_cast<std::int64_t>(std::llround(value))};
  return {value};
}

Cell SearchDimension::cell(const config::Draw& draw) const {
  if (categorical_) {
    const double index = draw.value_index >= 0 ? draw.value_index : encode(draw.value).value_or(0);
    return {index, index};
  }
  const double value = draw.value.get<double>();
  if (!discrete_) {
    const double point = *encode(draw.value);
    return {point, point};
  }
  const double half = (param_.distribution == Distribution::int_uniform ? 1.0 : param_.q) / 2;
  const double lower = normal_ ? 0.0 : low_;
  const double upper = normal_ ? 1.0 : high_;
  return {std::clamp(to_coordinate(value - half), lower, upper),
          std::clamp(to_coordinate(value + half), lower, upper)};
}

}  // namespace sweep::search
