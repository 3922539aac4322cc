/*
 * truncated_normal.h — the standard normal's tails, mass and quantile, and draws from a normal
 * truncated to [a, b]: what a Parzen kernel needs.
 *
 * Written for the tails: a kernel 100 standard deviations away from a point still gives a finite
 * log-mass (the asymptotic series of log Φ), so a far observation weighs nothing rather than
 * turning a log-likelihood into NaN.
 */
#pragma once

#include <cmath>
#include <limits>
#include <numbers>

namespace sweep::search {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// log of the standard normal density at z.
inline double log_normal_pdf(double z) {
  constexpr double kLogSqrtTwoPi = 0.91893853320467274178;  // log(sqrt(2 pi))
  return -0.5 * z * z - kLogSqrtTwoPi;
}

// Φ(z), accurate in the left tail (erfc keeps its relative precision there).
inline double normal_cdf(double z) { return 0.5 * std::erfc(-z * std::numbers::sqrt2 / 2); }

// log Φ(z), finite for every finite z.
double log_normal_cdf(double z);

// log(Φ(b) − Φ(a)) for a <= b: the log of the standard normal's mass on [a, b]; -inf when a == b.
double log_normal_mass(double a, double b);

// Φ⁻¹(p) for p in (0, 1); -inf / +inf at 0 / 1.
double normal_quantile(double p);

// The standard normal truncated to [a, b] (a < b) at quantile u in [0, 1): inverse-CDF sampling,
// computed on the side of the smaller tail so that draws near b stay precise.
double truncated_normal_quantile(double a, double b, double u);

}  // namespace sweep::search
