// A property test over every distribution: whatever TPE is told (values pulling to either end
// or to the middle, many seeds, multivariate and not), every value it suggests is one random
// search could have drawn: inside the bounds, on the q grid, of the same type.
#include <cmath>
#include <functional>

#include "search_test_util.h"

namespace sweep::search::testing {
namespace {

struct Case {
  const char* spec;                                   // the parameter x, as YAML
  std::function<bool(const sweep::Json& x)> allowed;  // the distribution's support
};

bool integer_between(const sweep::Json& x, double low, double high) {
  return x.is_number_integer() && x.get<double>() >= low && x.get<double>() <= high;
}

bool float_between(const sweep::Json& x, double low, double high) {
  return x.is_number_float() && x.get<double>() >= low && x.get<double>() <= high;
}

// k·q with integer k in [round(low/q), round(high/q)], as random search rounds.
bool on_grid(const sweep::Json& x, double q, double low, double high) {
  if (!x.is_number()) return false;
  const double k = x.get<double>() / q;
  return std::fabs(k - std::nearbyint(k)) < 1e-9 && std::nearbyint(k) >= std::nearbyint(low / q) &&
         std::nearbyint(k) <= std::nearbyint(high / q);
}

const double kInf = std::numeric_limits<double>::infinity();

std::vector<Case> cases() {
  return {
      {"{distribution: uniform, min: -2.5, max: 4}",
       [](const sweep::Json& x) { return float_between(x, -2.5, 4); }},
      {"{distribution: int_uniform, min: -3, max: 5}",
       [](const sweep::Json& x) { return integer_between(x, -3, 5); }},
      {"{distribution: int_uniform, min: 7, max: 8}",
       [](const sweep::Json& x) { return integer_between(x, 7, 8); }},
      {"{distribution: q_uniform, min: 0.05, max: 0.95, q: 0.1}",
       [](const sweep::Json& x) { return x.is_number_float() && on_grid(x, 0.1, 0.05, 0.95); }},
      {"{distribution: q_uniform, min: 0, max: 100, q: 8}",
       [](const sweep::Json& x) { return x.is_number_integer() && on_grid(x, 8, 0, 100); }},
      {"{distribution: log_uniform, min: -9, max: 0}",
       [](const sweep::Json& x) { return float_between(x, std::exp(-9.0) * (1 - 1e-12), 1); }},
      {"{distribution: log_uniform_values, min: 1e-6, max: 0.1}",
       [](const sweep::Json& x) { return float_between(x, 1e-6, 0.1); }},
      {"{distribution: q_log_uniform, min: 0, max: 6, q: 1}",
       [](const sweep::Json& x) {
         return x.is_number_integer() && on_grid(x, 1, 1, std::exp(6.0));
       }},
      {"{distribution: q_log_uniform_values, min: 0.1, max: 1000, q: 5}",
       [](const sweep::Json& x) { return x.is_number_integer() && on_grid(x, 5, 0.1, 1000); }},
      {"{distribution: q_log_uniform_values, min: 0.001, max: 1, q: 0.01}",
       [](const sweep::Json& x) { return x.is_number_float() && on_grid(x, 0.01, 0.001, 1); }},
      {"{distribution: normal, mu: 2, sigma: 0.5}",
       [](const sweep::Json& x) { return float_between(x, 2 - 7.1 * 0.5, 2 + 7.1 * 0.5); }},
      {"{distribution: q_normal, mu: 0, sigma: 10, q: 2}",
       [](const sweep::Json& x) { return x.is_number_integer() && on_grid(x, 2, -72, 72); }},
      {"{distribution: log_normal, mu: -3, sigma: 1}",
       [](const sweep::Json& x) { return float_between(x, 1e-300, std::exp(-3 + 7.1)); }},
      {"{distribution: q_log_normal, mu: 1, sigma: 1, q: 0.5}",
       [](const sweep::Json& x) { return x.is_number_float() && on_grid(x, 0.5, 0, kInf); }},
      {"{values: [a, b, c], probabilities: [0.5, 0, 0.5]}",
       [](const sweep::Json& x) { return x == "a" || x == "c"; }},
      {"{values: [1, 2.5, [3, 4]]}",
       [](const sweep::Json& x) {
         return x == 1 || x == 2.5 || x == sweep::Json{3, 4};
       }},
      {"{value: abc}", [](const sweep::Json& x) { return x == "abc"; }},
  };
}

// The value that orders x for the objectives (categorical: its index in the list).
double position(const sweep::Json& x) {
  if (x.is_number()) return x.get<double>();
  if (x == "a" || x == 1) return 0;
  if (x == "b" || x == 2.5) return 1;
  return 2;
}

TEST(TpeBounds, EverySuggestionIsInsideItsDistribution) {
  const std::vector<std::function<double(double)>> objectives = {
      [](double x) { return x; },                    // pulls to the low end
      [](double x) { return -x; },                   // the high end
      [](double x) { return std::fabs(x - 0.37); },  // somewhere inside
      [](double x) { return std::sin(13 * x); },     // anywhere
  };
  for (const Case& c : cases()) {
    const config::SearchSpace space =
        space_of(std::string("    x: ") + c.spec + "\n    y: {min: 0.0, max: 1.0}\n");
    for (const bool multivariate : {true, false})
      for (std::size_t o = 0; o < objectives.size(); ++o)
        for (std::uint64_t seed = 0; seed < 6; ++seed) {
          TpeOptions options;
          options.multivariate = multivariate;
          TpeSampler tpe(space, options, seed % 2 == 1, seed, 30);
          const auto& f = objectives[o];
          const auto points = drive(
              tpe,
              [&](const sweep::Json& p) {
                const double value = f(position(p["x"])) + 0.01 * p["y"].get<double>();
                return seed % 2 == 1 ? -value : value;
              },
              30);
          ASSERT_EQ(points.size(), 30u);
          for (const config::TrialPoint& point : points)
            ASSERT_TRUE(c.allowed(point.params["x"]))
                << c.spec << " gave " << point.params["x"].dump() << " (trial " << point.number
                << ", seed " << seed << ", objective " << o << ", multivariate " << multivariate
                << ")";
        }
  }
}

}  // namespace
}  // namespace sweep::search::testing
