// TPE against random search on fixed seeds: it finds the minimum of a 1-D quadratic, and of a
// log-scale "learning rate" curve, within tolerance in fewer trials. Random search here is the
// same sweep with method: random (config::sample_point, the same seeds): a fair comparison, and
// deterministic, so it cannot flake.
#include <algorithm>
#include <cmath>

#include "search_test_util.h"

namespace sweep::search::testing {
namespace {

constexpr int kBudget = 200;
constexpr int kSeeds = 10;

// Trials until f first comes within `tolerance` of its minimum 0 (kBudget + 1 if never).
int trials_to_reach(const std::vector<double>& values, double tolerance) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] <= tolerance) return static_cast<int>(i) + 1;
  return kBudget + 1;
}

struct Comparison {
  std::vector<int> tpe, random;  // trials to reach the tolerance, per seed
};

Comparison compare(const std::string& parameter, const std::function<double(double)>& f,
                   double tolerance) {
  Comparison out;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    const config::SweepConfig random =
        load_sweep("  method: random\n  max_trials: " + std::to_string(kBudget) + "\n  seed: " +
                   std::to_string(seed) + "\n  parameters:\n" + "    x: " + parameter + "\n");
    std::vector<double> random_values;
    for (int i = 0; i < kBudget; ++i)
      random_values.push_back(f(config::trial_point(random, i).params["x"].get<double>()));
    TpeSampler tpe(random.sweep.space, {}, false, seed, kBudget);
    std::vector<double> tpe_values;
    drive(
        tpe,
        [&](const sweep::Json& p) {
          tpe_values.push_back(f(p["x"].get<double>()));
          return tpe_values.back();
        },
        kBudget);
    out.tpe.push_back(trials_to_reach(tpe_values, tolerance));
    out.random.push_back(trials_to_reach(random_values, tolerance));
  }
  return out;
}

int median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void expect_tpe_faster(const Comparison& c) {
  int tpe_wins = 0;
  for (int s = 0; s < kSeeds; ++s) tpe_wins += c.tpe[s] < c.random[s];
  std::string table;
  for (int s = 0; s < kSeeds; ++s) {
    table += ' ';  // (appending piecewise: GCC 12 warns falsely on " " + std::string&&)
    table += std::to_string(c.tpe[s]);
    table += '/';
    table += std::to_string(c.random[s]);
  }
  std::printf("trials to tolerance, tpe/random per seed:%s; medians %d/%d\n", table.c_str(),
              median(c.tpe), median(c.random));
  EXPECT_LT(2 * median(c.tpe), median(c.random)) << table;
  EXPECT_GE(tpe_wins, 8) << table;
  for (int s = 0; s < kSeeds; ++s) EXPECT_LE(c.tpe[s], kBudget) << "seed " << s << ":" << table;
}

TEST(TpeQuality, FindsTheMinimumOfAQuadraticInFewerTrialsThanRandom) {
  // (x − 3.3)² on [−10, 10]: within 0.1 of the minimum is 1% of the interval.
  expect_tpe_faster(compare(
      "{min: -10.0, max: 10.0}", [](double x) { return (x - 3.3) * (x - 3.3); }, 0.01));
}

TEST(TpeQuality, FindsALearningRateOnALogScaleInFewerTrialsThanRandom) {
  // A loss curve with its best learning rate at 3e-3, over 1e-6 to 1: within a factor of
  // 1.05 of it is 0.7% of the log interval.
  expect_tpe_faster(compare(
      "{distribution: log_uniform_values, min: 1e-6, max: 1}",
      [](double lr) {
        const double d = std::log(lr / 3e-3);
        return d * d;
      },
      std::pow(std::log(1.05), 2)));
}

}  // namespace
}  // namespace sweep::search::testing
