/*
 * mean_squared_error_test.cpp — Backend::mean_squared_error on the CPU backend: the loss, its
 * gradient and its two statistics against the double reference (reference_ops.h), whose gradient
 * is itself checked by central differences; the mean over a larger batch (a replica's share);
 * statistics added, not overwritten.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tests/trainer/gradcheck.h"
#include "tests/trainer/reference_ops.h"
#include "trainer/cpu/cpu_backend.h"

namespace sweep::trainer {
namespace {

using testing::all_close;
using testing::gradient_matches;
using testing::numeric_gradient;
using testing::random_vector;
using testing::to_double;
using testing::to_float;

TEST(MeanSquaredError, ReferenceGradientMatchesFiniteDifferences) {
  std::mt19937_64 rng(7);
  const int n = 9;
  std::vector<double> pred = random_vector(n, rng, -3, 3);
  const std::vector<double> target = random_vector(n, rng, -3, 3);
  const auto loss = [&] {
    return ref::mean_squared_error<double>(pred.data(), target.data(), n, nullptr, n + 3);
  };
  std::vector<double> analytic(n);
  ref::mean_squared_error(pred.data(), target.data(), n, analytic.data(), n + 3);
  EXPECT_TRUE(gradient_matches(analytic, numeric_gradient(loss, pred)));
}

TEST(MeanSquaredError, CpuMatchesReference) {
  std::mt19937_64 rng(8);
  for (const int n : {1, 7, 300}) {
    for (const int mean_over : {n, 2 * n + 1}) {
      const std::vector<float> pred = to_float(random_vector(n, rng, -5, 5));
      const std::vector<float> target = to_float(random_vector(n, rng, -5, 5));
      const std::vector<double> pd = to_double(pred), td = to_double(target);
      std::vector<double> d_ref(n);
      double abs_ref = 0;
      const double loss_ref =
          ref::mean_squared_error(pd.data(), td.data(), n, d_ref.data(), mean_over, &abs_ref);

      CpuBackend cpu(2);
      std::vector<float> d(n, -99.f);
      double stats[2] = {1.0, 2.0};  // added to, not overwritten
      cpu.mean_squared_error(pred.data(), target.data(), n, d.data(), stats, mean_over);
      EXPECT_TRUE(all_close(d, d_ref, 1e-6, 1e-6)) << "n " << n << " mean over " << mean_over;
      EXPECT_NEAR(stats[0] - 1.0, loss_ref * mean_over, 1e-5 * loss_ref * mean_over);
      EXPECT_NEAR(stats[1] - 2.0, abs_ref, 1e-5 * abs_ref);

      double only_stats[2] = {0, 0};
      cpu.mean_squared_error(pred.data(), target.data(), n, nullptr, only_stats, mean_over);
      EXPECT_EQ(only_stats[0], stats[0] - 1.0);
      EXPECT_EQ(only_stats[1], stats[1] - 2.0);
    }
  }
}

TEST(MeanSquaredError, PerfectPredictionsCostNothing) {
  const std::vector<float> v = {1.5f, -2.f, 0.f};
  std::vector<float> d(3, 1.f);
  double stats[2] = {0, 0};
  CpuBackend cpu(1);
  cpu.mean_squared_error(v.data(), v.data(), 3, d.data(), stats, 3);
  EXPECT_EQ(stats[0], 0.0);
  EXPECT_EQ(stats[1], 0.0);
  EXPECT_EQ(d, std::vector<float>(3, 0.f));
}

}  // namespace
}  // namespace sweep::trainer
