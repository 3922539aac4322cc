// W&B's distributions with W&B's meanings: ranges, log_uniform (exponents) versus
// log_uniform_values (values), quantisation, inference of the distribution, probabilities.
#include <algorithm>
#include <cmath>
#include <map>

#include "config_test_util.h"

namespace sweep::config::testing {
namespace {

// Draws `n` values of the single parameter `spec` (a YAML flow map) through a random sweep.
std::vector<double> draws(const std::string& spec, int n = 400) {
  const SweepConfig config = load_text(
      "trainer: {command: \"true\"}\n"
      "sweep:\n  method: random\n  max_trials: " +
      std::to_string(n) + "\n  metric: {name: score}\n  parameters:\n    x: " + spec + "\n");
  std::vector<double> out;
  for (const TrialPlan& t : expand(config)) out.push_back(t.params["x"].get<double>());
  return out;
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double sd(const std::vector<double>& v) {
  const double m = mean(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

Distribution inferred(const std::string& spec) {
  const SweepConfig config = load_text(
      "trainer: {command: \"true\"}\nsweep:\n  method: random\n"
      "  max_trials: 1\n  metric: {name: s}\n  parameters:\n"
      "    x: " +
      spec + "\n");
  return config.sweep.space.params.at(0).distribution;
}

TEST(Distributions, InferredAsWandbDoes) {
  EXPECT_EQ(inferred("{values: [1, 2]}"), Distribution::categorical);
  EXPECT_EQ(inferred("{value: 3}"), Distribution::constant);
  EXPECT_EQ(inferred("{min: 1, max: 5}"), Distribution::int_uniform);
  EXPECT_EQ(inferred("{min: 1.0, max: 5}"), Distribution::uniform);
  EXPECT_EQ(inferred("{min: 0.1, max: 0.5}"), Distribution::uniform);
  EXPECT_EQ(inferred("{distribution: normal}"), Distribution::normal);
}

TEST(Distributions, UniformStaysInRangeAndCoversIt) {
  const auto v = draws("{distribution: uniform, min: 2, max: 3}");
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 3.0);
  EXPECT_NEAR(mean(v), 2.5, 0.05);
}

TEST(Distributions, IntUniformIncludesBothEnds) {
  const SweepConfig config = load_text(
      "trainer: {command: \"true\"}\nsweep:\n  method: random\n  max_trials: 300\n"
      "  metric: {name: s}\n  parameters:\n    k: {min: 1, max: 4}\n");
  std::map<std::int64_t, int> counts;
  for (const TrialPlan& t : expand(config)) {
    ASSERT_TRUE(t.params["k"].is_number_integer());
    ++counts[t.params["k"].get<std::int64_t>()];
  }
  EXPECT_EQ(counts.size(), 4u);
  EXPECT_EQ(counts.begin()->first, 1);
  EXPECT_EQ(counts.rbegin()->first, 4);
}

TEST(Distributions, LogUniformTakesExponentsLogUniformValuesTakesValues) {
  // log_uniform: min/max are natural-log exponents: exp(uniform(-4, -1)).
  const auto exponents = draws("{distribution: log_uniform, min: -4, max: -1}");
  for (double x : exponents) {
    EXPECT_GE(x, std::exp(-4.0));
    EXPECT_LE(x, std::exp(-1.0));
  }
  // log_uniform_values: min/max are the values; the log is uniform between their logs.
  const auto values = draws("{distribution: log_uniform_values, min: 0.001, max: 0.1}");
  std::vector<double> logs;
  for (double x : values) {
    EXPECT_GE(x, 0.001);
    EXPECT_LE(x, 0.1);
    logs.push_back(std::log10(x));
  }
  EXPECT_NEAR(mean(logs), -2.0, 0.1);  // uniform in log space: the median decade is the middle
  // The bounds as written hold exactly: exp(log(0.01)) is 0.010000000000000004.
  for (double x : draws("{distribution: log_uniform_values, min: 0.01, max: 0.01}", 20))
    EXPECT_EQ(x, 0.01);
}

TEST(Distributions, QuantizedAreMultiplesOfQAndIntegersForAnIntegerQ) {
  const SweepConfig config = load_text(
      "trainer: {command: \"true\"}\nsweep:\n  method: random\n  max_trials: 100\n"
      "  metric: {name: s}\n  parameters:\n"
      "    a: {distribution: q_uniform, min: 0, max: 256, q: 32}\n"
      "    b: {distribution: q_uniform, min: 0, max: 1, q: 0.25}\n"
      "    c: {distribution: q_log_uniform_values, min: 16, max: 512, q: 16}\n"
      "    d: {distribution: q_normal, mu: 0, sigma: 10, q: 5}\n"
      "    e: {distribution: q_log_normal, mu: 2, sigma: 0.5, q: 2}\n"
      "    f: {distribution: q_log_uniform, min: 0, max: 3, q: 1}\n");
  for (const TrialPlan& t : expand(config)) {
    ASSERT_TRUE(t.params["a"].is_number_integer());
    EXPECT_EQ(t.params["a"].get<std::int64_t>() % 32, 0);
    EXPECT_LE(t.params["a"].get<std::int64_t>(), 256);
    ASSERT_TRUE(t.params["b"].is_number_float());
    EXPECT_EQ(std::fmod(t.params["b"].get<double>(), 0.25), 0.0);
    EXPECT_EQ(t.params["c"].get<std::int64_t>() % 16, 0);
    EXPECT_GE(t.params["c"].get<std::int64_t>(), 16);
    EXPECT_EQ(t.params["d"].get<std::int64_t>() % 5, 0);
    EXPECT_EQ(t.params["e"].get<std::int64_t>() % 2, 0);
    EXPECT_LE(t.params["f"].get<std::int64_t>(), 21);  // round(e^3) = 20
  }
}

TEST(Distributions, NormalAndLogNormalHaveTheirMoments) {
  const auto normal = draws("{distribution: normal, mu: 5, sigma: 2}", 1000);
  EXPECT_NEAR(mean(normal), 5.0, 0.2);
  EXPECT_NEAR(sd(normal), 2.0, 0.15);
  const auto log_normal = draws("{distribution: log_normal, mu: -1, sigma: 0.5}", 1000);
  std::vector<double> logs;
  for (double x : log_normal) {
    EXPECT_GT(x, 0.0);
    logs.push_back(std::log(x));
  }
  EXPECT_NEAR(mean(logs), -1.0, 0.05);
  EXPECT_NEAR(sd(logs), 0.5, 0.05);
}

TEST(Distributions, CategoricalHonoursProbabilitiesAndConstantIsConstant) {
  const SweepConfig config = load_text(
      "trainer: {command: \"true\"}\nsweep:\n  method: random\n  max_trials: 500\n"
      "  metric: {name: s}\n  parameters:\n"
      "    opt: {values: [sgdm, adam], probabilities: [0.8, 0.2]}\n"
      "    c: {value: 7}\n");
  int sgdm = 0;
  for (const TrialPlan& t : expand(config)) {
    sgdm += t.params["opt"] == "sgdm";
    EXPECT_EQ(t.params["c"], 7);
  }
  EXPECT_NEAR(sgdm / 500.0, 0.8, 0.05);
}

TEST(Distributions, SameSeedSameNumbersAcrossCalls) {
  UnitRng a(42), b(42);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.uniform(), b.uniform());
  ParamSpec p;
  p.distribution = Distribution::uniform;
  p.min = 0;
  p.max = 1;
  UnitRng c(1);
  const double first = sample_param(p, c).value.get<double>();
  UnitRng d(1);
  EXPECT_EQ(sample_param(p, d).value.get<double>(), first);
}

}  // namespace
}  // namespace sweep::config::testing
