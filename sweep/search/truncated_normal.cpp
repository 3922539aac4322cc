/*
 * truncated_normal.cpp — Φ, log Φ, Φ⁻¹ and the truncated normal's quantile.
 *
 * Φ⁻¹ is Acklam's rational approximation (relative error 1.15e-9) refined by one Halley step
 * against erfc, which brings it to double precision; the log-CDF switches to its asymptotic
 * series below z = -30, where Φ itself underflows (as Optuna's _truncnorm does).
 */
#include "sweep/search/truncated_normal.h"

#include <algorithm>
#include <limits>

namespace sweep::search {

namespace {

// log(e^p − e^q) for p >= q.
double log_difference(double log_p, double log_q) {
  if (log_q == -kInf) return log_p;
  return log_p + std::log1p(-std::exp(log_q - log_p));
}

}  // namespace

double log_normal_cdf(double z) {
  if (z > 6) return std::log1p(-normal_cdf(-z));
  if (z > -30) return std::log(normal_cdf(z));
  // Φ(z) = φ(z)/(-z) · (1 − 1/z² + 3/z⁴ − 15/z⁶ + ...), summed until the terms stop helping.
  const double inverse_square = 1.0 / (z * z);
  double sum = 1.0;
  double term = 1.0;
  for (int k = 1; k < 12; ++k) {
    const double next = -term * (2.0 * k - 1.0) * inverse_square;
    if (std::fabs(next) >= std::fabs(term)) break;
    term = next;
    sum += term;
  }
  return log_normal_pdf(z) - std::log(-z) + std::log(sum);
}

double log_normal_mass(double a, double b) {
  if (!(a < b)) return -kInf;
  if (a > 0) return log_normal_mass(-b, -a);  // work in the left tail, where erfc is precise
  if (b <= 0) {
    const double mass = normal_cdf(b) - normal_cdf(a);
    if (mass > 1e-280 && mass > 1e-6 * normal_cdf(b)) return std::log(mass);
    return log_difference(log_normal_cdf(b), log_normal_cdf(a));
  }
  // a <= 0 < b: the mass is at least Φ(b) − 1/2 or 1/2 − Φ(a); 1 − Φ(a) − Φ(−b) has no
  // cancellation worth the name.
  return std::log1p(-normal_cdf(a) - normal_cdf(-b));
}

double normal_quantile(double p) {
  if (p <= 0) return -kInf;
  if (p >= 1) return kInf;
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x = 0;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  // One Halley step on Φ(x) − p.
  const double error = normal_cdf(x) - p;
  const double u = error * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

double truncated_normal_quantile(double a, double b, double u) {
  if (a > 0) return -truncated_normal_quantile(-b, -a, 1 - u);  // mirror into the left tail
  const double cdf_a = normal_cdf(a);
  const double mass = normal_cdf(b) - cdf_a;
  double z = 0;
  const double p = cdf_a + u * mass;
  if (p <= 0.5 || b <= 0) {
    z = normal_quantile(p);
  } else {
    // Near b, from the upper tail: 1 − p = Φ(−b) + (1 − u)·mass.
    z = -normal_quantile(normal_cdf(-b) + (1 - u) * mass);
  }
  if (!(z >= a)) z = a;  // also NaN from a mass that underflowed
  return std::min(z, b);
}

}  // namespace sweep::search
