/*
 * activation.cpp — ReLU and dropout. Dropout after an inference forward passes gradients through
 * unchanged (the forward was the identity), so backward stays correct in either mode.
 */
#include "trainer/layers/activation.h"

#include <cstdio>

#include "common/check.h"

namespace sweep::trainer {

void ReLU::forward(const float* x, float* y, int batch, bool training) {
  const std::size_t n = std::size_t(batch) * in_.numel();
  if (is_nhwc(in_storage_))
    channels_last(*backend_).relu_forward_nhwc(in_storage_, x, y, n);
  else
    backend_->relu_forward(x, y, n);
}

void ReLU::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  if (!dx) return;
  const std::size_t n = std::size_t(batch) * in_.numel();
  if (is_nhwc(in_storage_))
    channels_last(*backend_).relu_backward_nhwc(in_storage_, y, dy, dx, n);
  else
    backend_->relu_backward(y, dy, dx, n);
}

std::string Dropout::describe() const {
  char buf[48];
  std::snprintf(buf, sizeof buf, "dropout %.3g", static_cast<double>(rate_));
  return buf;
}

Shape Dropout::setup(Shape in) {
  if (!(rate_ >= 0.f && rate_ < 1.f))
    throw Error("rate must be in [0, 1), got " + std::to_string(rate_));
  return in_ = out_ = in;
}

void Dropout::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  Layer::bind(backend, params, grads, state, max_batch);
  mask_ = DeviceBuffer(backend, std::size_t(max_batch) * in_.numel() * sizeof(float));
}

void Dropout::forward(const float* x, float* y, int batch, bool training) {
  const std::size_t n = std::size_t(batch) * in_.numel();
  last_training_ = training && rate_ > 0.f;
  if (last_training_)
    backend_->dropout_forward(x, y, mask_.f(), n, rate_, seed_, counter_);
  else
    backend_->copy(y, x, n * sizeof(float));
}

void Dropout::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  if (!dx) return;
  const std::size_t n = std::size_t(batch) * in_.numel();
  if (last_training_)
    backend_->mul(dy, mask_.f(), dx, n);
  else
    backend_->copy(dx, dy, n * sizeof(float));
}

}  // namespace sweep::trainer
