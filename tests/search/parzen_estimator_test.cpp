// The Parzen estimator against Optuna 3.1's _ParzenEstimator: the same log-densities for the
// same observations (the reference numbers were printed by Debian's python3-optuna 3.1.0), in
// Optuna 3.1's width-weighted scoring; and, scoring as a density, a mixture that integrates to 1.
#include "sweep/search/parzen_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sweep/search/search_dimension.h"

namespace sweep::search::testing {
namespace {

SearchDimension dimension(config::Distribution distribution, double min, double max) {
  config::ParamSpec p;
  p.name = "x";
  p.distribution = distribution;
  p.min = min;
  p.max = max;
  return *SearchDimension::of(p, 0);
}

std::vector<double> log_pdf(const SearchDimension& d, const std::vector<double>& observations,
                            const ParzenOptions& options, const std::vector<Cell>& cells) {
  const ParzenEstimator estimator({&d}, observations, observations.size(), options);
  return estimator.log_pdf(cells, cells.size());
}

TEST(ParzenEstimator, WidthWeightedScoresAreOptuna31s) {
  const SearchDimension d = dimension(config::Distribution::uniform, 0, 10);
  const std::vector<double> observations = {2.0, 2.5, 7.0};
  const std::vector<Cell> cells = {{3.0, 3.0}, {9.5, 9.5}, {0.25, 0.25}};
  // _ParzenEstimator({"x": [2, 2.5, 7]}, {"x": FloatDistribution(0, 10)}, defaults).log_pdf
  const std::vector<double> multivariate = {-0.7288110059878226, -1.2564273743581331,
                                            -0.9858948443577351};
  const std::vector<double> univariate = {-0.7117842282979983, -1.2490361947218847,
                                          -0.933779126938596};
  for (const bool joint : {true, false}) {
    ParzenOptions options;
    options.multivariate = joint;
    options.width_weighted_density = true;
    const std::vector<double> ours = log_pdf(d, observations, options, cells);
    const std::vector<double>& optuna = joint ? multivariate : univariate;
    for (std::size_t i = 0; i < cells.size(); ++i)
      EXPECT_NEAR(ours[i], optuna[i], 1e-10) << "multivariate " << joint << ", point " << i;
  }
}

TEST(ParzenEstimator, AsADensityItIntegratesToOne) {
  const SearchDimension d = dimension(config::Distribution::uniform, 0, 10);
  for (const bool joint : {true, false}) {
    ParzenOptions options;
    options.multivariate = joint;
    options.width_weighted_density = false;
    std::vector<Cell> grid;
    const int steps = 20000;
    const double dx = 10.0 / steps;
    for (int i = 0; i < steps; ++i) grid.push_back({(i + 0.5) * dx, (i + 0.5) * dx});
    double integral = 0;
    for (double lp : log_pdf(d, {2.0, 2.5, 7.0}, options, grid)) integral += std::exp(lp) * dx;
    EXPECT_NEAR(integral, 1.0, 1e-6) << "multivariate " << joint;
    // Width-weighted, the kernels' masses are their sigmas: not a density.
    options.width_weighted_density = true;
    double weighted = 0;
    for (double lp : log_pdf(d, {2.0, 2.5, 7.0}, options, grid)) weighted += std::exp(lp) * dx;
    EXPECT_GT(std::fabs(weighted - 1.0), 0.5) << "multivariate " << joint;
  }
}

TEST(ParzenEstimator, UnivariateGridMassesAreOptuna31sWithFarKernelsSkipped) {
  // 20 observations over 500 integers: each cell is far (> 40 log units) from most kernels,
  // which the estimator skips; the densities must still be Optuna's to rounding.
  const SearchDimension d = dimension(config::Distribution::int_uniform, 1, 500);
  const std::vector<double> observations = {3,   17,  40,  41,  120, 250, 251, 260, 300, 301,
                                            302, 330, 410, 480, 499, 500, 1,   2,   60,  61};
  std::vector<Cell> cells;
  for (double v : {1.0, 5.0, 42.0, 255.0, 301.0, 400.0, 500.0}) cells.push_back({v - 0.5, v + 0.5});
  // _ParzenEstimator({"x": observations}, {"x": IntDistribution(1, 500)}, defaults).log_pdf
  const std::vector<double> optuna = {-5.038358900456973, -5.00448203009327,  -5.382331246890279,
                                      -6.040935640719036, -5.807802612499751, -7.035253434901774,
                                      -5.537265799456989};
  ParzenOptions options;
  options.multivariate = false;
  const std::vector<double> ours = log_pdf(d, observations, options, cells);
  for (std::size_t i = 0; i < cells.size(); ++i) EXPECT_NEAR(ours[i], optuna[i], 1e-10) << i;
}

}  // namespace
}  // namespace sweep::search::testing
