/*
 * gradcheck.h — finite-difference gradient checking and tensor comparison for the engine tests.
 *
 * Gradients are checked in double precision: the analytic backward of a double reference op
 * (reference_ops.h) against central differences of its forward, on the scalar L = sum(y * r) for a
 * fixed random r (so dL/dy = r exercises every output). The float backends are then compared with
 * the double reference backward, which chains the two proofs: finite differences -> reference ->
 * backend. Tolerances grow with the value: |a - ref| <= tol + |ref| * eps (llm.c's rule).
 */
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <sstream>
#include <vector>

namespace sweep::trainer::testing {

inline std::vector<double> random_vector(std::size_t n, std::mt19937_64& rng, double lo = -1.0,
                                         double hi = 1.0) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Rounds to float and back, so a double reference sees exactly the float backend's inputs.
inline std::vector<float> to_float(const std::vector<double>& v) {
  return std::vector<float>(v.begin(), v.end());
}
inline std::vector<double> to_double(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}
inline std::vector<double> float_rounded(const std::vector<double>& v) {
  return to_double(to_float(v));
}

// Every element within tol + |ref| * eps; names the first mismatches.
template <class A, class B>
::testing::AssertionResult all_close(const A* actual, const B* expected, std::size_t n, double tol,
                                     double eps) {
  std::ostringstream bad;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = double(actual[i]), e = double(expected[i]);
    if (!(std::fabs(a - e) <= tol + std::fabs(e) * eps)) {
      if (failures < 5) bad << "\n  [" << i << "] got " << a << ", expected " << e;
      ++failures;
    }
  }
  if (!failures) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << failures << " of " << n << " values differ (tol " << tol
                                       << ", eps " << eps << "):" << bad.str();
}
template <class A, class B>
::testing::AssertionResult all_close(const std::vector<A>& actual, const std::vector<B>& expected,
                                     double tol, double eps) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << actual.size() << " vs " << expected.size();
  return all_close(actual.data(), expected.data(), actual.size(), tol, eps);
}

// Central differences of scalar f at x, one coordinate at a time (x is restored).
inline std::vector<double> numeric_gradient(const std::function<double()>& f,
                                            std::vector<double>& x, double h = 1e-6) {
  std::vector<double> g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const double up = f();
    x[i] = keep - h;
    const double down = f();
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// sum(y * r): the scalar whose gradient with respect to y is r.
inline double weighted_sum(const std::vector<double>& y, const std::vector<double>& r) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
  return s;
}

// Analytic vs numeric gradient: double precision leaves about 1e-9 of noise at h = 1e-6.
inline ::testing::AssertionResult gradient_matches(const std::vector<double>& analytic,
                                                   const std::vector<double>& numeric) {
  return all_close(analytic, numeric, 1e-6, 1e-5);
}

}  // namespace sweep::trainer::testing
