// The normal's CDF, log-mass and quantile where the kernels need them: the tails included.
#include "sweep/search/truncated_normal.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sweep::search {
namespace {

TEST(TruncatedNormal, QuantileInvertsTheCdf) {
  for (double p : {1e-300, 1e-20, 1e-9, 0.001, 0.02425, 0.3, 0.5, 0.7, 0.97575, 0.999999}) {
    const double z = normal_quantile(p);
    EXPECT_NEAR(normal_cdf(z) / p, 1.0, 1e-12) << p;
  }
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile(1e-12), -7.034483825301131, 1e-9);
}

TEST(TruncatedNormal, LogMassMatchesKnownValuesAndStaysFiniteInTheTails) {
  EXPECT_NEAR(std::exp(log_normal_mass(-1, 1)), 0.6826894921370859, 1e-15);
  EXPECT_NEAR(std::exp(log_normal_mass(0, 1e300)), 0.5, 1e-15);
  EXPECT_NEAR(log_normal_mass(2, 3), std::log(0.0214002339165491), 1e-12);  // right side
  // log Φ(−40) = −804.608...; the mass of [−41, −40] is nearly all of it.
  EXPECT_NEAR(log_normal_cdf(-40), -804.6084420137538, 1e-9);
  EXPECT_NEAR(log_normal_mass(-41, -40), -804.6084420137538, 1e-6);
  EXPECT_NEAR(log_normal_mass(40, 41), -804.6084420137538, 1e-6);
  EXPECT_TRUE(std::isfinite(log_normal_mass(150, 150.5)));
  EXPECT_EQ(log_normal_mass(1, 1), -std::numeric_limits<double>::infinity());
}

TEST(TruncatedNormal, DrawsStayInsideAndFollowTheQuantiles) {
  for (const auto& [a, b] :
       {std::pair{-1.0, 2.0}, {-100.0, 0.5}, {0.0, 100.0}, {3.0, 9.0}, {-9.0, -3.0}}) {
    for (double u : {0.0, 1e-12, 0.25, 0.5, 0.75, 1 - 1e-12}) {
      const double z = truncated_normal_quantile(a, b, u);
      ASSERT_GE(z, a);
      ASSERT_LE(z, b);
      const double mass = std::exp(log_normal_mass(a, b));
      if (u > 0 && z > a) {
        EXPECT_NEAR(std::exp(log_normal_mass(a, z)) / mass, u, 1e-9) << a;
      }
    }
  }
}

}  // namespace
}  // namespace sweep::search
