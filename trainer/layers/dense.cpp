/*
 * dense.cpp — fully connected layer with torch.nn.Linear's initialisation:
 * weight and bias U(-1/sqrt(in), 1/sqrt(in)).
 */
#include "trainer/layers/dense.h"

#include <cmath>

#include "common/check.h"

namespace sweep::trainer {

std::string Dense::describe() const {
  return "dense " + std::to_string(units_) + (bias_ ? "" : " no-bias");
}

Shape Dense::setup(Shape in) {
  if (units_ < 1) throw Error("units must be at least 1");
  in_ = in;
  in_features_ = static_cast<int>(in.numel());
  out_ = Shape{units_, 1, 1};
  param_count_ = std::size_t(units_) * in_features_ + (bias_ ? std::size_t(units_) : 0);
  return out_;
}

void Dense::init(std::mt19937_64& rng, float* host_params, float* host_state) const {
  const float bound = 1.f / std::sqrt(static_cast<float>(in_features_));
  for (std::size_t i = 0; i < param_count_; ++i) host_params[i] = uniform_symmetric(rng, bound);
}

void Dense::forward(const float* x, float* y, int batch, bool training) {
  const std::size_t wsize = std::size_t(units_) * in_features_;
  const float* b = bias_ ? params_ + wsize : nullptr;
  if (relu_after_)
    dense_forward_relu(*backend_, x, params_, b, y, batch, in_features_, units_);
  else
    backend_->dense_forward(x, params_, b, y, batch, in_features_, units_);
}

void Dense::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  const std::size_t wsize = std::size_t(units_) * in_features_;
  float* db = bias_ ? grads_ + wsize : nullptr;
  if (relu_input_ && dx)
    dense_backward_relu_input(*backend_, x, params_, dy, dx, grads_, db, batch, in_features_,
                              units_);
  else
    backend_->dense_backward(x, params_, dy, dx, grads_, db, batch, in_features_, units_);
}

}  // namespace sweep::trainer
