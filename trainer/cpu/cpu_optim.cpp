/*
 * cpu_optim.cpp — gradient norm, clipping scale and the optimizer update over the flat arrays.
 *
 * The update is one pass over all parameters, written so the compiler vectorises it (the optimizer
 * kind is switched outside the loop; no branch inside). Formulas are backend.h's (PyTorch
 * torch.optim, L2 weight decay added to the gradient). sum_squares adds fixed 64K-value blocks in
 * order, so the norm, and therefore clipping, is reproducible.
 */
#include <cmath>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {

namespace {
constexpr std::size_t kSumBlock = std::size_t{1} << 16;
constexpr std::size_t kStepGrain = std::size_t{1} << 14;
}  // namespace

void CpuBackend::sum_squares(const float* x, std::size_t n, double* out) {
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  double* partial = double_scratch(blocks);
  run([&] { cpu::for_range(blocks, 1, [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t lo = b * kSumBlock, hi = std::min(n, lo + kSumBlock);
      double acc = 0;
      for (std::size_t i = lo; i < hi; ++i) acc += double(x[i]) * double(x[i]);
      partial[b] = acc;
    }
  }); });
  double total = 0;
  for (std::size_t b = 0; b < blocks; ++b) total += partial[b];
  *out += total;
}

void CpuBackend::clip_scale(const double* sumsq, float max_norm, float* scale) {
  const double s = double(max_norm) / (std::sqrt(*sumsq) + 1e-6);
  *scale = static_cast<float>(s < 1.0 ? s : 1.0);
}

void CpuBackend::optimizer_step(const OptimizerStep& s, float* params, const float* grads,
                                float* state1, float* state2, std::size_t n,
                                const float* grad_scale) {
  const float gs = grad_scale ? *grad_scale : 1.f;
  const float lr = s.lr, wd = s.weight_decay;
  run([&] { cpu::for_range(n, kStepGrain, [&](std::size_t lo, std::size_t hi) {
    float* __restrict p = params;
    const float* __restrict gr = grads;
    float* __restrict s1 = state1;
    float* __restrict s2 = state2;
    switch (s.kind) {
      case OptimizerKind::sgdm: {
        const float mu = s.momentum;
        if (s.nesterov) {
          for (std::size_t i = lo; i < hi; ++i) {
            const float g = gr[i] * gs + wd * p[i];
            const float v = mu * s1[i] + g;
            s1[i] = v;
            p[i] -= lr * (g + mu * v);
          }
        } else {
          for (std::size_t i = lo; i < hi; ++i) {
            const float g = gr[i] * gs + wd * p[i];
            const float v = mu * s1[i] + g;
            s1[i] = v;
            p[i] -= lr * v;
          }
        }
        break;
      }
      case OptimizerKind::adam: {
        const double t = double(s.t);
        const float b1 = s.beta1, b2 = s.beta2, eps = s.eps;
        const float bc1 = static_cast<float>(1.0 - std::pow(double(b1), t));
        const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double(b2), t)));
        const float step = lr / bc1;
        for (std::size_t i = lo; i < hi; ++i) {
          const float g = gr[i] * gs + wd * p[i];
          const float m = b1 * s1[i] + (1.f - b1) * g;
          const float v = b2 * s2[i] + (1.f - b2) * g * g;
          s1[i] = m;
          s2[i] = v;
          p[i] -= step * m / (std::sqrt(v) * inv_sqrt_bc2 + eps);
        }
        break;
      }
      case OptimizerKind::rmsprop: {
        const float a = s.alpha, eps = s.eps;
        for (std::size_t i = lo; i < hi; ++i) {
          const float g = gr[i] * gs + wd * p[i];
          const float v = a * s1[i] + (1.f - a) * g * g;
          s1[i] = v;
          p[i] -= lr * g / (std::sqrt(v) + eps);
        }
        break;
      }
    }
  }); });
}

}  // namespace sweep::trainer
