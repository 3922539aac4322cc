/*
 * cpu_norm.cpp — batch normalisation, one channel per loop step.
 *
 * Statistics are accumulated in double over the N*HW values of a channel (a float sum over a large
 * batch loses the digits that the variance is made of) in a fixed order, so they are reproducible.
 * The running variance takes the UNBIASED batch variance, as PyTorch does; the normalisation itself
 * uses the biased one.
 */
#include <cmath>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {

namespace {

std::size_t channels_per_task(const BatchNormGeom& g) {
  const std::size_t work = std::size_t(g.n) * g.hw;
  return std::max<std::size_t>(1, (std::size_t{1} << 14) / std::max<std::size_t>(1, work));
}

}  // namespace

void CpuBackend::batchnorm_forward_train(const BatchNormGeom& g, const float* x,
                                         const float* gamma, const float* beta,
                                         float* running_mean, float* running_var,
                                         float* save_mean, float* save_invstd, float* y) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  const double count = double(g.n) * g.hw;
  run([&] { cpu::for_range(std::size_t(g.c), channels_per_task(g),
                           [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      double sum = 0, sumsq = 0;
      for (int n = 0; n < g.n; ++n) {
        const float* p = x + n * stride + c * plane;
        for (std::size_t i = 0; i < plane; ++i) sum += p[i];
      }
      const double mean = sum / count;
      for (int n = 0; n < g.n; ++n) {
        const float* p = x + n * stride + c * plane;
        for (std::size_t i = 0; i < plane; ++i) {
          const double d = p[i] - mean;
          sumsq += d * d;
        }
      }
      const double var = sumsq / count;
      const double invstd = 1.0 / std::sqrt(var + double(g.eps));
      const double unbiased = count > 1 ? sumsq / (count - 1) : var;
      save_mean[c] = static_cast<float>(mean);
      save_invstd[c] = static_cast<float>(invstd);
      running_mean[c] = static_cast<float>((1.0 - g.momentum) * running_mean[c] + g.momentum * mean);
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
  }); });
}

void CpuBackend::batchnorm_forward_infer(const BatchNormGeom& g, const float* x,
                                         const float* gamma, const float* beta,
                                         const float* running_mean, const float* running_var,
                                         float* y) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  run([&] { cpu::for_range(std::size_t(g.c), channels_per_task(g),
                           [&](std::size_t c0, std::size_t c1) {
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
  }); });
}

void CpuBackend::batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                                    const float* gamma, const float* save_mean,
                                    const float* save_invstd, float* dx, float* dgamma,
                                    float* dbeta) {
  const std::size_t plane = std::size_t(g.hw), stride = std::size_t(g.c) * g.hw;
  const double count = double(g.n) * g.hw;
  run([&] { cpu::for_range(std::size_t(g.c), channels_per_task(g),
                           [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      const double mean = save_mean[c], invstd = save_invstd[c];
      double sum_dy = 0, sum_dy_xhat = 0;
      for (int n = 0; n < g.n; ++n) {
        const float* p = x + n * stride + c * plane;
        const float* d = dy + n * stride + c * plane;
        for (std::size_t i = 0; i < plane; ++i) {
          sum_dy += d[i];
          sum_dy_xhat += d[i] * ((p[i] - mean) * invstd);
        }
      }
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
  }); });
}

}  // namespace sweep::trainer
