/*
 * adam_factors.h — Adam's bias-correction factors for step t, the one host computation every
 * backend uses.
 *
 * step = lr / (1 - beta1^t) and inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t), each computed in double and
 * rounded to float once. A backend's kernel multiplies by these floats, so computing them in one
 * place is what keeps the CPU and CUDA updates bit-identical: dividing in float instead (lr by a
 * float-rounded 1 - beta1^t) differs in the last bit for some (lr, beta1, t).
 */
#pragma once

#include <cmath>
#include <cstdint>

namespace sweep::trainer {

struct AdamFactors {
  float step;          // lr / (1 - beta1^t)
  float inv_sqrt_bc2;  // 1 / sqrt(1 - beta2^t)
};

inline AdamFactors adam_factors(float lr, float beta1, float beta2, std::int64_t t) {
  const double td = static_cast<double>(t);
  AdamFactors f{};
  f.step = static_cast<float>(double(lr) / (1.0 - std::pow(double(beta1), td)));
  f.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double(beta2), td)));
  return f;
}

}  // namespace sweep::trainer
