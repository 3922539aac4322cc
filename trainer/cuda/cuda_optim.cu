/*
 * cuda_optim.cu — gradient norm, clipping scale and the fused optimizer update (kernels in
 * optim.cuh).
 *
 * Adam's bias corrections are computed on the host by trainer/optim/adam_factors.h, the function
 * the CPU backend uses too, and passed in, so both backends multiply by the same float factors;
 * in a captured step the kernel reads them from the step block instead (CudaBackend::replay
 * refreshes it).
 */
#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/optim.cuh"
#include "trainer/optim/adam_factors.h"

namespace sweep::trainer::cuda {

void CudaBackend::sum_squares(const float* x, std::size_t n, double* out) {
  enter();
  cuda::sum_squares(x, n, out, sumsq_partial_.as<double>(), stream());
}

void CudaBackend::clip_scale(const double* sumsq, float max_norm, float* scale) {
  enter();
  cuda::clip_scale(sumsq, max_norm, scale, stream());
}

void CudaBackend::optimizer_step(const OptimizerStep& s, float* params, const float* grads,
                                 float* state1, float* state2, std::size_t n,
                                 const float* grad_scale) {
  enter();
  if (s.kind == OptimizerKind::adam && !state2)
    throw Error("optimizer_step: adam needs a second state array");
  OptimizerArgs a{};
  a.kind = s.kind;
  a.nesterov = s.nesterov;
  a.lr = s.lr;
  a.momentum = s.momentum;
  a.beta1 = s.beta1;
  a.beta2 = s.beta2;
  a.alpha = s.alpha;
  a.eps = s.eps;
  a.weight_decay = s.weight_decay;
  const AdamFactors adam = adam_factors(s.lr, s.beta1, s.beta2, s.t < 1 ? 1 : s.t);
  a.adam_step = adam.step;
  a.adam_inv_sqrt_bc2 = adam.inv_sqrt_bc2;
  cuda::optimizer_step(a, params, grads, state1, state2, n, grad_scale, dyn(), stream());
}

}  // namespace sweep::trainer::cuda
