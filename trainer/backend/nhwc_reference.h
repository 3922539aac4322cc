/*
 * nhwc_reference.h — the reference of every op on channels-last activations (channels_last_ops.h):
 * convert the operands to fp32 NCHW, run the backend's fp32 op (its ReLU folds through
 * fused_ops.h's choice), convert the results back (rounding to bf16 where the storage is bf16).
 * The CPU backend is a NhwcReference, which makes it the reference the CUDA kernels are compared
 * with and lets a test run a network's storage plan in CI; the ops allocate their fp32 copies per
 * call, so a backend that captures its steps in a graph implements its own. A backend deriving from
 * it still says which storage it keeps and how it converts (nhwc_storage, to_storage,
 * from_storage); it keeps nothing for a convolution's backward (conv_kept_bytes 0).
 */
#pragma once

#include "trainer/backend/channels_last_ops.h"

namespace sweep::trainer {

class NhwcReference : public ChannelsLastOps {
 public:
  // backend: the one whose fp32 ops and memory the reference uses (the deriving backend itself).
  explicit NhwcReference(Backend& backend) : backend_(backend) {}

  std::size_t conv_kept_bytes(const ConvGeom& g, Storage xs) override;
  void conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x, const float* w,
                             const float* b, Storage ys, void* y, void* kept) override;
  void conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x, const void* kept,
                              const float* w, Storage ys, const void* dy, void* dx, float* dw,
                              float* db) override;
  void batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                    const float* gamma, const float* beta, float* running_mean,
                                    float* running_var, float* save_mean, float* save_invstd,
                                    void* y, bool relu) override;
  void batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                    const float* gamma, const float* beta,
                                    const float* running_mean, const float* running_var, void* y,
                                    bool relu) override;
  void batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x, const void* relu_y,
                               const void* dy, const float* gamma, const float* save_mean,
                               const float* save_invstd, void* dx, float* dgamma,
                               float* dbeta) override;
  void relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n) override;
  void relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                          std::size_t n) override;
  void add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n,
                bool relu) override;
  void maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y) override;
  void maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x, const void* y,
                                const void* dy, void* dx) override;
  void global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x, float* y) override;
  void global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                    void* dx) override;

 private:
  Backend& backend_;
};

}  // namespace sweep::trainer
