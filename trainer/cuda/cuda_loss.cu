/*
 * cuda_loss.cu — softmax cross-entropy, argmax and mean squared error of the CUDA backend
 * (kernels in loss.cuh).
 *
 * Nothing here waits for the device: the loss statistics stay in device doubles that the loop
 * reads every log_every iterations, which is what keeps a small model's step free of host syncs.
 */
#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda/loss.cuh"

namespace sweep::trainer::cuda {

void CudaBackend::softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n,
                                        int classes, float* dlogits, double* stats, int mean_over) {
  enter();
  cuda::softmax_cross_entropy(logits, labels, n, classes, dlogits, stats, mean_over, dyn(),
                              stream());
}

void CudaBackend::mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                                     double* stats, int mean_over) {
  enter();
  cuda::mean_squared_error(pred, targets, n, dpred, stats, mean_over, dyn(), stream());
}

void CudaBackend::argmax(const float* logits, int n, int classes, std::int32_t* pred) {
  enter();
  cuda::argmax(logits, n, classes, pred, dyn(), stream());
}

}  // namespace sweep::trainer::cuda
