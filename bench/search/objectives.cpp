/*
 * objectives.cpp — the six objectives and their search spaces (see objectives.h); objectives.py
 * is the same code for Optuna, line for line, so keep the two in step.
 */
#include "bench/search/objectives.h"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace sweep::bench {
namespace {

using config::Distribution;
using config::ParamSpec;

ParamSpec param(const std::string& name, Distribution distribution, double min, double max) {
  ParamSpec p;
  p.name = name;
  p.sets_config_key = false;
  p.distribution = distribution;
  p.min = min;
  p.max = max;
  p.where.label = "bench objective parameter " + name;
  return p;
}

ParamSpec categorical(const std::string& name, const std::vector<std::string>& values) {
  ParamSpec p = param(name, Distribution::categorical, 0, 0);
  for (const std::string& v : values) {
    p.values.emplace_back(v);
    p.value_texts.push_back(v);
    p.value_locations.push_back(p.where);
  }
  return p;
}

// The coordinates' names, x0 ... x5 (spelled out: GCC 12 warns falsely about "x" + to_string).
constexpr std::array<const char*, 6> kX = {"x0", "x1", "x2", "x3", "x4", "x5"};

config::SearchSpace uniform_box(int dims, double min, double max) {
  config::SearchSpace space;
  for (int i = 0; i < dims; ++i)
    space.params.push_back(param(kX[i], Distribution::uniform, min, max));
  return space;
}

double x(const Json& params, int i) { return params.at(kX[i]).get<double>(); }

double sphere(const Json& params, std::uint64_t, std::uint64_t) {
  double total = 0;
  for (int i = 0; i < 5; ++i) total += x(params, i) * x(params, i);
  return total;
}

double square(double v) { return v * v; }

double rosenbrock(const Json& params, std::uint64_t, std::uint64_t) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    const double xi = x(params, i);
    total += 100.0 * square(x(params, i + 1) - xi * xi) + square(1.0 - xi);
  }
  return total;
}

double branin(const Json& params, std::uint64_t, std::uint64_t) {
  const double pi = std::numbers::pi;
  const double x1 = x(params, 0), x2 = x(params, 1);
  const double b = 5.1 / (4.0 * pi * pi), c = 5.0 / pi, t = 1.0 / (8.0 * pi);
  return square(x2 - b * x1 * x1 + c * x1 - 6.0) + 10.0 * (1.0 - t) * std::cos(x1) + 10.0;
}

constexpr std::array<double, 4> kHartmannAlpha = {1.0, 1.2, 3.0, 3.2};
constexpr std::array<std::array<double, 6>, 4> kHartmannA = {{
    {10.0, 3.0, 17.0, 3.5, 1.7, 8.0},
    {0.05, 10.0, 17.0, 0.1, 8.0, 14.0},
    {3.0, 3.5, 1.7, 10.0, 17.0, 8.0},
    {17.0, 8.0, 0.05, 10.0, 0.1, 14.0},
}};
constexpr std::array<std::array<double, 6>, 4> kHartmannP = {{
    {0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
    {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
    {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
    {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381},
}};

double hartmann6(const Json& params, std::uint64_t, std::uint64_t) {
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    double inner = 0;
    for (int j = 0; j < 6; ++j) {
      const double d = x(params, j) - kHartmannP[i][j];
      inner += kHartmannA[i][j] * d * d;
    }
    total += kHartmannAlpha[i] * std::exp(-inner);
  }
  return -total;
}

constexpr double kLrBest = 3e-3;
constexpr double kLrNoiseSd = 0.02;

// A validation loss against the learning rate: a parabola in log10(lr) around 3e-3, steeper above
// it (too large a rate diverges).
double lr_curve(double lr) {
  const double u = std::log10(lr / kLrBest);
  double loss = 0.25 + 0.08 * u * u;
  if (u > 0.0) loss += 0.3 * u * u * u;
  return loss;
}

double lr_noisy_clean(const Json& params) { return lr_curve(params.at("lr").get<double>()); }

double lr_noisy(const Json& params, std::uint64_t seed, std::uint64_t trial) {
  return lr_noisy_clean(params) + kLrNoiseSd * bench_noise(seed, trial);
}

// mixed: per optimizer, a floor, the best depth and the best learning rate.
struct MixedOptimum {
  const char* optimizer;
  double floor;
  int best_layers;
  double best_lr;
};
constexpr std::array<MixedOptimum, 3> kMixed = {{
    {"sgd", 0.15, 4, 3e-2},
    {"adam", 0.0, 3, 1e-3},
    {"rmsprop", 0.08, 6, 3e-4},
}};

double mixed(const Json& params, std::uint64_t, std::uint64_t) {
  const std::string optimizer = params.at("optimizer").get<std::string>();
  for (const MixedOptimum& m : kMixed) {
    if (optimizer != m.optimizer) continue;
    const double dl = params.at("layers").get<double>() - m.best_layers;
    const double u = std::log10(params.at("lr").get<double>() / m.best_lr);
    return m.floor + 0.04 * dl * dl + 0.3 * u * u;
  }
  throw std::invalid_argument("mixed: unknown optimizer " + optimizer);
}

template <double (*F)(const Json&, std::uint64_t, std::uint64_t)>
double noise_free(const Json& params) {
  return F(params, 0, 0);
}

std::vector<Objective> make_objectives() {
  std::vector<Objective> all;
  all.push_back({"sphere5", uniform_box(5, -5.0, 5.0), sphere, noise_free<sphere>});
  all.push_back({"rosenbrock5", uniform_box(5, -2.048, 2.048), rosenbrock, noise_free<rosenbrock>});
  config::SearchSpace branin_space;
  branin_space.params = {param("x0", Distribution::uniform, -5.0, 10.0),
                         param("x1", Distribution::uniform, 0.0, 15.0)};
  all.push_back({"branin", branin_space, branin, noise_free<branin>});
  all.push_back({"hartmann6", uniform_box(6, 0.0, 1.0), hartmann6, noise_free<hartmann6>});
  config::SearchSpace lr_space;
  lr_space.params = {param("lr", Distribution::log_uniform_values, 1e-6, 1.0)};
  all.push_back({"lr_noisy", lr_space, lr_noisy, lr_noisy_clean});
  config::SearchSpace mixed_space;
  mixed_space.params = {categorical("optimizer", {"sgd", "adam", "rmsprop"}),
                        param("layers", Distribution::int_uniform, 1, 8),
                        param("lr", Distribution::log_uniform_values, 1e-5, 1e-1)};
  all.push_back({"mixed", mixed_space, mixed, noise_free<mixed>});
  return all;
}

std::uint64_t splitmix64(std::uint64_t v) {
  v += 0x9e3779b97f4a7c15ull;
  v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
  v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
  return v ^ (v >> 31);
}

}  // namespace

double bench_noise(std::uint64_t seed, std::uint64_t trial) {
  const std::uint64_t a = splitmix64(splitmix64(seed) ^ trial);
  const std::uint64_t b = splitmix64(a);
  const double u1 = static_cast<double>(a >> 11) * (1.0 / 9007199254740992.0);
  const double u2 = static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0);
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

const std::vector<Objective>& objectives() {
  static const std::vector<Objective> all = make_objectives();
  return all;
}

const Objective& objective(const std::string& name) {
  std::string known;
  for (const Objective& o : objectives()) {
    if (o.name == name) return o;
    known += (known.empty() ? "" : ", ") + o.name;
  }
  throw std::invalid_argument("unknown objective '" + name + "' (known: " + known + ")");
}

}  // namespace sweep::bench
