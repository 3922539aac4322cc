/*
 * cuda_batchnorm.cu — the CUDA backend's batch norm on fp32 NCHW (kernels in batchnorm.h),
 * optionally with the ReLU after it folded in, both ways.
 */
#include "trainer/cuda/batchnorm.h"
#include "trainer/cuda/cuda_backend.h"

namespace sweep::trainer::cuda {

void CudaBackend::batchnorm_forward_train(const BatchNormGeom& g, const float* x,
                                          const float* gamma, const float* beta,
                                          float* running_mean, float* running_var, float* save_mean,
                                          float* save_invstd, float* y) {
  enter();
  batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y, false,
                  scratch_floats(batchnorm_scratch_floats(g)), stream());
}

void CudaBackend::batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x,
                                               const float* gamma, const float* beta,
                                               float* running_mean, float* running_var,
                                               float* save_mean, float* save_invstd, float* y) {
  enter();
  batchnorm_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd, y, true,
                  scratch_floats(batchnorm_scratch_floats(g)), stream());
}

void CudaBackend::batchnorm_forward_infer(const BatchNormGeom& g, const float* x,
                                          const float* gamma, const float* beta,
                                          const float* running_mean, const float* running_var,
                                          float* y) {
  enter();
  batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, false, stream());
}

void CudaBackend::batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x,
                                               const float* gamma, const float* beta,
                                               const float* running_mean, const float* running_var,
                                               float* y) {
  enter();
  batchnorm_infer(g, x, gamma, beta, running_mean, running_var, y, true, stream());
}

void CudaBackend::batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                                     const float* gamma, const float* save_mean,
                                     const float* save_invstd, float* dx, float* dgamma,
                                     float* dbeta) {
  batchnorm_backward_relu(g, x, nullptr, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
}

// y null: no ReLU (batchnorm_backward).
void CudaBackend::batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                                          const float* dy, const float* gamma,
                                          const float* save_mean, const float* save_invstd,
                                          float* dx, float* dgamma, float* dbeta) {
  const std::size_t nx = std::size_t(g.n) * g.c * g.hw, c = std::size_t(g.c);
  enter_backward({floats(x, nx), floats(y, nx), floats(dy, nx), floats(gamma, c),
                  floats(save_mean, c), floats(save_invstd, c)},
                 {floats(dx, nx), floats(dgamma, c), floats(dbeta, c)});
  batchnorm_grad(g, x, y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta,
                 scratch_floats(batchnorm_scratch_floats(g)), stream());
}

}  // namespace sweep::trainer::cuda
