/*
 * batchnorm.cpp — batch normalisation layer: gamma = 1, beta = 0, running mean 0 and variance 1
 * (PyTorch's reset_parameters). A training batch with a single value per channel (batch 1 of a
 * dense input) has no variance; PyTorch refuses it, and so do we, with the reason.
 */
#include "trainer/layers/batchnorm.h"

#include <algorithm>

#include "common/check.h"

namespace sweep::trainer {

Shape BatchNorm::setup(Shape in) {
  in_ = out_ = in;
  param_count_ = 2 * std::size_t(in.c);
  state_count_ = 2 * std::size_t(in.c);
  return out_;
}

void BatchNorm::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  Layer::bind(backend, params, grads, state, max_batch);
  saved_ = DeviceBuffer(backend, 2 * std::size_t(in_.c) * sizeof(float));
}

void BatchNorm::init(std::mt19937_64& rng, float* host_params, float* host_state) const {
  const std::size_t c = std::size_t(in_.c);
  std::fill(host_params, host_params + c, 1.f);
  std::fill(host_params + c, host_params + 2 * c, 0.f);
  std::fill(host_state, host_state + c, 0.f);
  std::fill(host_state + c, host_state + 2 * c, 1.f);
}

BatchNormGeom BatchNorm::geometry(int batch) const {
  return BatchNormGeom{batch, in_.c, in_.h * in_.w, eps_, momentum_};
}

void BatchNorm::forward(const float* x, float* y, int batch, bool training) {
  const BatchNormGeom g = geometry(batch);
  const float* gamma = params_;
  const float* beta = params_ + in_.c;
  if (training && std::int64_t(batch) * g.hw < 2)
    throw Error("batchnorm in training needs more than one value per channel; batch " +
                std::to_string(batch) + " of " + std::to_string(in_.c) +
                " features gives one (use a batch of at least 2)");
  if (is_nhwc(in_storage_)) {
    if (training)
      channels_last(*backend_).batchnorm_forward_train_nhwc(g, in_storage_, x, gamma, beta, state_,
                                                            state_ + in_.c, saved_.f(),
                                                            saved_.f() + in_.c, y, relu_after_);
    else
      channels_last(*backend_).batchnorm_forward_infer_nhwc(g, in_storage_, x, gamma, beta, state_,
                                                            state_ + in_.c, y, relu_after_);
    return;
  }
  if (training) {
    if (relu_after_)
      batchnorm_forward_train_relu(*backend_, g, x, gamma, beta, state_, state_ + in_.c, saved_.f(),
                                   saved_.f() + in_.c, y);
    else
      backend_->batchnorm_forward_train(g, x, gamma, beta, state_, state_ + in_.c, saved_.f(),
                                        saved_.f() + in_.c, y);
  } else if (relu_after_) {
    batchnorm_forward_infer_relu(*backend_, g, x, gamma, beta, state_, state_ + in_.c, y);
  } else {
    backend_->batchnorm_forward_infer(g, x, gamma, beta, state_, state_ + in_.c, y);
  }
}

void BatchNorm::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  if (is_nhwc(in_storage_))
    channels_last(*backend_).batchnorm_backward_nhwc(
        geometry(batch), in_storage_, x, relu_after_ ? y : nullptr, dy, params_, saved_.f(),
        saved_.f() + in_.c, dx, grads_, grads_ + in_.c);
  else if (relu_after_)
    batchnorm_backward_relu(*backend_, geometry(batch), x, y, dy, params_, saved_.f(),
                            saved_.f() + in_.c, dx, grads_, grads_ + in_.c);
  else
    backend_->batchnorm_backward(geometry(batch), x, dy, params_, saved_.f(), saved_.f() + in_.c,
                                 dx, grads_, grads_ + in_.c);
}

bool fold_relu_into_batchnorm(Layer& layer, const Layer& next) {
  auto* norm = dynamic_cast<BatchNorm*>(&layer);
  if (!norm || next.kind() != LayerKind::relu) return false;
  norm->fuse_relu_after(true);
  return true;
}

}  // namespace sweep::trainer
