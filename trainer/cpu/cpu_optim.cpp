/*
 * cpu_optim.cpp — gradient norm, clipping scale and the optimizer update over the flat arrays.
 *
 * The update is one pass over all parameters, one small kernel per optimizer over restrict
 * pointers so the compiler vectorises it (SGD always; Adam and RMSprop only when the build allows
 * -fno-math-errno, since std::sqrt may otherwise set errno). Formulas are backend.h's (PyTorch
 * torch.optim, L2 weight decay added to the gradient). sum_squares adds fixed 64K-value blocks in
 * order, so the norm, and therefore clipping, is reproducible.
 */
#include <cmath>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"
#include "trainer/optim/adam_factors.h"

namespace sweep::trainer {

namespace {

constexpr std::size_t kSumBlock = std::size_t{1} << 16;
constexpr std::size_t kStepGrain = std::size_t{1} << 14;

// The kernels are free functions over restrict pointers: inside a lambda GCC gives up on them.
void sgdm_kernel(float* __restrict p, const float* __restrict grad, float* __restrict vel,
                 std::size_t lo, std::size_t hi, float gs, float wd, float lr, float mu,
                 bool nesterov) {
  if (nesterov) {
    for (std::size_t i = lo; i < hi; ++i) {
      const float g = grad[i] * gs + wd * p[i];
      const float v = mu * vel[i] + g;
      vel[i] = v;
      p[i] -= lr * (g + mu * v);
    }
  } else {
    for (std::size_t i = lo; i < hi; ++i) {
      const float g = grad[i] * gs + wd * p[i];
      const float v = mu * vel[i] + g;
      vel[i] = v;
      p[i] -= lr * v;
    }
  }
}

void adam_kernel(float* __restrict p, const float* __restrict grad, float* __restrict m1,
                 float* __restrict m2, std::size_t lo, std::size_t hi, float gs, float wd, float b1,
                 float b2, float step, float inv_sqrt_bc2, float eps) {
  for (std::size_t i = lo; i < hi; ++i) {
    const float g = grad[i] * gs + wd * p[i];
    const float m = b1 * m1[i] + (1.f - b1) * g;
    const float v = b2 * m2[i] + (1.f - b2) * g * g;
    m1[i] = m;
    m2[i] = v;
    p[i] -= step * m / (std::sqrt(v) * inv_sqrt_bc2 + eps);
  }
}

void rmsprop_kernel(float* __restrict p, const float* __restrict grad, float* __restrict sq,
                    std::size_t lo, std::size_t hi, float gs, float wd, float lr, float alpha,
                    float eps) {
  for (std::size_t i = lo; i < hi; ++i) {
    const float g = grad[i] * gs + wd * p[i];
    const float v = alpha * sq[i] + (1.f - alpha) * g * g;
    sq[i] = v;
    p[i] -= lr * g / (std::sqrt(v) + eps);
  }
}

}  // namespace

void CpuBackend::sum_squares(const float* x, std::size_t n, double* out) {
  const std::size_t blocks = (n + kSumBlock - 1) / kSumBlock;
  double* partial = double_scratch(blocks);
  run([&] {
    cpu::for_range(blocks, 1, [&](std::size_t b0, std::size_t b1) {
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t lo = b * kSumBlock, hi = std::min(n, lo + kSumBlock);
        double acc = 0;
        for (std::size_t i = lo; i < hi; ++i) acc += double(x[i]) * double(x[i]);
        partial[b] = acc;
      }
    });
  });
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
  const float b1 = s.beta1, b2 = s.beta2;
  const AdamFactors adam = adam_factors(lr, b1, b2, s.t);
  const float adam_step = adam.step, inv_sqrt_bc2 = adam.inv_sqrt_bc2;
  run([&] {
    cpu::for_range(n, kStepGrain, [&](std::size_t lo, std::size_t hi) {
      switch (s.kind) {
        case OptimizerKind::sgdm:
          sgdm_kernel(params, grads, state1, lo, hi, gs, wd, lr, s.momentum, s.nesterov);
          break;
        case OptimizerKind::adam:
          adam_kernel(params, grads, state1, state2, lo, hi, gs, wd, b1, b2, adam_step,
                      inv_sqrt_bc2, s.eps);
          break;
        case OptimizerKind::rmsprop:
          rmsprop_kernel(params, grads, state1, lo, hi, gs, wd, lr, s.alpha, s.eps);
          break;
      }
    });
  });
}

}  // namespace sweep::trainer
