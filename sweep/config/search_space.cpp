/*
 * search_space.cpp — grid enumeration and random draws.
 *
 * Each trial gets its own engine seeded from (seed, index) through splitmix64, so draws of one
 * trial never shift when another parameter or trial is added after it.
 */
#include "sweep/config/search_space.h"

#include <algorithm>
#include <cmath>

#include "common/json.h"

namespace sweep::config {

namespace {

struct NamedDistribution {
  Distribution distribution;
  const char* name;
};

constexpr NamedDistribution kNames[] = {
    {Distribution::categorical, "categorical"},
    {Distribution::constant, "constant"},
    {Distribution::uniform, "uniform"},
    {Distribution::int_uniform, "int_uniform"},
    {Distribution::q_uniform, "q_uniform"},
    {Distribution::log_uniform, "log_uniform"},
    {Distribution::log_uniform_values, "log_uniform_values"},
    {Distribution::q_log_uniform, "q_log_uniform"},
    {Distribution::q_log_uniform_values, "q_log_uniform_values"},
    {Distribution::normal, "normal"},
    {Distribution::q_normal, "q_normal"},
    {Distribution::log_normal, "log_normal"},
    {Distribution::q_log_normal, "q_log_normal"},
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// numpy's round(x / q) * q (half to even under the default rounding mode).
double quantize(double x, double q) { return std::nearbyint(x / q) * q; }

sweep::Json number_value(double x, bool as_integer) {
  if (as_integer) return static_cast<std::int64_t>(std::llround(x));
  return x;
}

}  // namespace

const char* to_string(Distribution d) {
  for (const auto& entry : kNames)
    if (entry.distribution == d) return entry.name;
  return "unknown";
}

std::optional<Distribution> parse_distribution(const std::string& name) {
  for (const auto& entry : kNames)
    if (name == entry.name) return entry.distribution;
  return std::nullopt;
}

std::vector<std::string> distribution_names() {
  std::vector<std::string> names;
  for (const auto& entry : kNames) names.emplace_back(entry.name);
  return names;
}

std::uint64_t SearchSpace::grid_size() const {
  std::uint64_t size = 1;
  for (const ParamSpec& p : params) {
    const std::uint64_t n = p.values.size();
    size = n != 0 && size > UINT64_MAX / n ? UINT64_MAX : size * n;  // saturating
  }
  return size;
}

std::vector<std::size_t> SearchSpace::grid_point(std::uint64_t point) const {
  std::vector<std::size_t> indices(params.size());
  for (std::size_t i = params.size(); i-- > 0;) {
    const std::uint64_t count = params[i].values.size();
    indices[i] = static_cast<std::size_t>(point % count);
    point /= count;
  }
  return indices;
}

double UnitRng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double UnitRng::normal() {
  // Box-Muller with u1 in (0, 1] so the log is finite.
  const double u1 = 1.0 - uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

Draw sample_param(const ParamSpec& p, UnitRng& rng) {
  const auto uniform_between = [&](double lo, double hi) { return lo + rng.uniform() * (hi - lo); };
  const bool q_int = p.integer_q;
  switch (p.distribution) {
    case Distribution::constant:
      return {p.values.front(), 0};
    case Distribution::categorical: {
      const double u = rng.uniform();
      std::size_t index = 0;
      if (p.probabilities.empty()) {
        index = static_cast<std::size_t>(u * static_cast<double>(p.values.size()));
      } else {
        double cumulative = 0;
        index = p.values.size() - 1;
        for (std::size_t i = 0; i < p.probabilities.size(); ++i) {
          cumulative += p.probabilities[i];
          if (u < cumulative) {
            index = i;
            break;
          }
        }
      }
      if (index >= p.values.size()) index = p.values.size() - 1;
      return {p.values[index], static_cast<int>(index)};
    }
    case Distribution::uniform:
      return {uniform_between(p.min, p.max)};
    case Distribution::int_uniform: {
      const double span = p.max - p.min + 1;
      double k = std::floor(rng.uniform() * span);
      if (k >= span) k = span - 1;
      return {static_cast<std::int64_t>(p.min + k)};
    }
    case Distribution::q_uniform:
      return {number_value(quantize(uniform_between(p.min, p.max), p.q), q_int)};
    case Distribution::log_uniform:
      return {std::exp(uniform_between(p.min, p.max))};
    case Distribution::log_uniform_values:
      // exp(log(x)) is not always x: the bounds the user wrote hold exactly (min == max == 0.01
      // drew 0.010000000000000004, above its max).
      return {
          std::clamp(std::exp(uniform_between(std::log(p.min), std::log(p.max))), p.min, p.max)};
    case Distribution::q_log_uniform:
      return {number_value(quantize(std::exp(uniform_between(p.min, p.max)), p.q), q_int)};
    case Distribution::q_log_uniform_values:
      return {number_value(
          quantize(std::exp(uniform_between(std::log(p.min), std::log(p.max))), p.q), q_int)};
    case Distribution::normal:
      return {p.mu + p.sigma * rng.normal()};
    case Distribution::q_normal:
      return {number_value(quantize(p.mu + p.sigma * rng.normal(), p.q), q_int)};
    case Distribution::log_normal:
      return {std::exp(p.mu + p.sigma * rng.normal())};
    case Distribution::q_log_normal:
      return {number_value(quantize(std::exp(p.mu + p.sigma * rng.normal()), p.q), q_int)};
  }
  return {nullptr};
}

std::vector<Draw> sample_point(const SearchSpace& space, std::uint64_t seed, std::uint64_t index) {
  UnitRng rng(splitmix64(seed ^ splitmix64(index + 1)));
  std::vector<Draw> draws;
  draws.reserve(space.params.size());
  for (const ParamSpec& p : space.params) draws.push_back(sample_param(p, rng));
  return draws;
}

}  // namespace sweep::config
