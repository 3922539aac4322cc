/*
 * activation.h — parameter-free elementwise layers: ReLU and (inverted) dropout.
 *
 * Dropout's mask comes from trainer/rng.h's counter hash, seeded per layer and step by the
 * Network, so a resumed run and the CUDA backend draw the same mask; at inference it is identity.
 */
#pragma once

#include "trainer/layers/layer.h"

namespace sweep::trainer {

class ReLU final : public Layer {
 public:
  LayerKind kind() const override { return LayerKind::relu; }
  Shape setup(Shape in) override { return in_ = out_ = in; }
  NhwcRole nhwc_role(const Backend&) const override { return NhwcRole::passthrough; }
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
};

class Dropout final : public Layer {
 public:
  explicit Dropout(float rate) : rate_(rate) {}
  LayerKind kind() const override { return LayerKind::dropout; }
  std::string describe() const override;
  Shape setup(Shape in) override;
  void bind(Backend& backend, float* params, float* grads, float* state, int max_batch) override;
  void set_random(std::uint64_t seed, std::uint64_t counter) override {
    seed_ = seed;
    counter_ = counter;
  }
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  float rate_;
  bool last_training_ = false;
  std::uint64_t seed_ = 0, counter_ = 0;
  DeviceBuffer mask_;  // (max_batch, features): 0 or 1 / (1 - rate)
};

}  // namespace sweep::trainer
