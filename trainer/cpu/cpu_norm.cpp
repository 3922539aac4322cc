/*
 * cpu_norm.cpp — batch normalisation, one channel per loop step.
 *
 * Statistics are summed per plane in vectorised float lanes (reduce.h) and across the planes of a
 * channel in double (a float sum over a large batch loses the digits the variance is made of), in
 * a fixed order, so they are reproducible. The variance is a second pass around the mean, not
 * E[x^2] - E[x]^2, which cancels catastrophically when the mean is large.
 * The running variance takes the UNBIASED batch variance, as PyTorch does; the normalisation itself
 * uses the biased one.
 */
#include <algorithm>
#include <cmath>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"
#include "trainer/cpu/reduce.h"

namespace sweep::trainer {

namespace {

std::size_t channels_per_task(const BatchNormGeom& g) {
  const std::size_t work = std::size_t(g.n) * g.hw;
  return std::max<std::size_t>(1, (std::size_t{1} << 14) / std::max<std::size_t>(1, work));
}

}  // namespace

void CpuBackend::batchnorm_forward_train(const BatchNormGeom& g, const float* x, const float* gamma,
                                         const float* beta, float* running_mean, float* running_var,
                                         float* save_mean, float* save_invstd, float* y) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  const double count = double(g.n) * g.hw;
  run([&] {
    cpu::for_range(std::size_t(g.c), channels_per_task(g), [&](std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c) {
        double sum = 0, sumsq = 0;
        for (int n = 0; n < g.n; ++n) sum += cpu::lane_sum(x + n * stride + c * plane, plane);
        const double mean = sum / count;
        const float mean_f = static_cast<float>(mean);
        for (int n = 0; n < g.n; ++n)
          sumsq += cpu::lane_sum_sq_dev(x + n * stride + c * plane, plane, mean_f);
        // Deviations were taken from the float-rounded mean; correct for the rounding exactly.
        const double off = double(mean_f) - mean;
        sumsq = std::max(0.0, sumsq - count * off * off);
        const double var = sumsq / count;
        const double invstd = 1.0 / std::sqrt(var + double(g.eps));
        const double unbiased = count > 1 ? sumsq / (count - 1) : var;
        save_mean[c] = static_cast<float>(mean);
        save_invstd[c] = static_cast<float>(invstd);
        running_mean[c] =
            static_cast<float>((1.0 - g.momentum) * running_mean[c] + g.momentum * mean);
        running_var[c] =
            static_cast<float>((1.0 - g.momentum) * running_var[c] + g.momentum * unbiased);
        const float scale = static_cast<float>(gamma[c] * invstd);
        const float shift = static_cast<float>(beta[c] - mean * gamma[c] * invstd);
        for (int n = 0; n < g.n; ++n) {
          const float* p = x + n * stride + c * plane;
          float* q = y + n * stride + c * plane;
          for (std::size_t i = 0; i < plane; ++i) q[i] = p[i] * scale + shift;
        }
      }
    });
  });
}

void CpuBackend::batchnorm_forward_infer(const BatchNormGeom& g, const float* x, const float* gamma,
                                         const float* beta, const float* running_mean,
                                         const float* running_var, float* y) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  run([&] {
    cpu::for_range(std::size_t(g.c), channels_per_task(g), [&](std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c) {
        const double invstd = 1.0 / std::sqrt(double(running_var[c]) + double(g.eps));
        const float scale = static_cast<float>(gamma[c] * invstd);
        const float shift = static_cast<float>(beta[c] - running_mean[c] * gamma[c] * invstd);
        for (int n = 0; n < g.n; ++n) {
          const float* p = x + n * stride + c * plane;
          float* q = y + n * stride + c * plane;
          for (std::size_t i = 0; i < plane; ++i) q[i] = p[i] * scale + shift;
        }
      }
    });
  });
}

void CpuBackend::batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                                    const float* gamma, const float* save_mean,
                                    const float* save_invstd, float* dx, float* dgamma,
                                    float* dbeta) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  const double count = double(g.n) * g.hw;
  run([&] {
    cpu::for_range(std::size_t(g.c), channels_per_task(g), [&](std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c) {
        const double mean = save_mean[c], invstd = save_invstd[c];
        double sum_dy = 0, sum_dy_xc = 0;
        for (int n = 0; n < g.n; ++n) {
          float part_dy, part_dy_xc;
          cpu::lane_sum_dot(dy + n * stride + c * plane, x + n * stride + c * plane, plane,
                            save_mean[c], part_dy, part_dy_xc);
          sum_dy += part_dy;
          sum_dy_xc += part_dy_xc;
        }
        const double sum_dy_xhat = sum_dy_xc * invstd;
        dgamma[c] = static_cast<float>(sum_dy_xhat);
        dbeta[c] = static_cast<float>(sum_dy);
        // dx = gamma * invstd * (dy - mean(dy) - xhat * mean(dy * xhat))
        const double k = gamma[c] * invstd;
        const double mean_dy = sum_dy / count, mean_dy_xhat = sum_dy_xhat / count;
        const float a = static_cast<float>(k), b = static_cast<float>(-k * mean_dy);
        const float cx = static_cast<float>(-k * mean_dy_xhat * invstd);
        const float m = static_cast<float>(mean);
        for (int n = 0; n < g.n; ++n) {
          const float* p = x + n * stride + c * plane;
          const float* d = dy + n * stride + c * plane;
          float* q = dx + n * stride + c * plane;
          for (std::size_t i = 0; i < plane; ++i) q[i] = a * d[i] + b + cx * (p[i] - m);
        }
      }
    });
  });
}

}  // namespace sweep::trainer
