/*
 * batchnorm.h — batch normalisation. Parameters: gamma (C), beta (C). State: running mean (C),
 * running variance (C), in the Network's state buffer.
 *
 * Spatial (per channel over N*H*W) for a 4-D input, per feature for a dense input (H = W = 1):
 * PyTorch's BatchNorm2d and BatchNorm1d, with eps 1e-5 and momentum 0.1. Backward uses the mean
 * and inverse std saved by the last TRAINING forward.
 */
#pragma once

#include "trainer/layers/layer.h"

namespace sweep::trainer {

class BatchNorm final : public Layer {
 public:
  BatchNorm(float eps = 1e-5f, float momentum = 0.1f) : eps_(eps), momentum_(momentum) {}
  LayerKind kind() const override { return LayerKind::batchnorm; }
  Shape setup(Shape in) override;
  void bind(Backend& backend, float* params, float* grads, float* state, int max_batch) override;
  void init(std::mt19937_64& rng, float* host_params, float* host_state) const override;
  bool always_writes_dx() const override { return true; }
  NhwcRole nhwc_role(const Backend&) const override { return NhwcRole::passthrough; }
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  // A ReLU follows and is folded in (Network): y = max(0, bn(x)), and backward's dy is the
  // gradient of that y (the ReLU's backward is done here).
  void fuse_relu_after(bool on) { relu_after_ = on; }

 private:
  BatchNormGeom geometry(int batch) const;
  float eps_, momentum_;
  bool relu_after_ = false;
  DeviceBuffer saved_;  // mean (C), then invstd (C), of the last training forward
};

// Folds a ReLU `next` that follows batch norm `layer` into it (BatchNorm::fuse_relu_after):
// true when it did, and the caller then treats the ReLU as a view of the batch norm's output and
// skips its backward. The Network and the residual block's chain both fold this way.
bool fold_relu_into_batchnorm(Layer& layer, const Layer& next);

}  // namespace sweep::trainer
