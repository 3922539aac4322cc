/*
 * optimizer.cpp — fill an OptimizerStep and launch it.
 *
 * The sum-of-squares accumulator is reset with a device-to-device copy from a zero kept on the
 * backend (Backend::fill is float-only and a host copy would be a transfer per step).
 */
#include "trainer/optim/optimizer.h"

#include "trainer/config_keys.h"

namespace sweep::trainer {

Optimizer::Optimizer(Backend& backend, const TrainingSpec& spec, std::size_t param_count)
    : backend_(backend), count_(param_count), clip_norm_(static_cast<float>(spec.gradient_clip)) {
  // The key table's ranges (trainer/config_keys.h): what the YAML reader refuses, refused here.
  check_training_keys(spec);
  base_.kind = spec.optimizer;
  base_.momentum = static_cast<float>(spec.momentum);
  base_.nesterov = spec.nesterov;
  base_.beta1 = static_cast<float>(spec.beta1);
  base_.beta2 = static_cast<float>(spec.beta2);
  base_.alpha = static_cast<float>(spec.rms_decay);
  base_.eps = static_cast<float>(spec.epsilon);
  base_.weight_decay = static_cast<float>(spec.weight_decay);
  state1_ = DeviceBuffer(backend, count_ * sizeof(float));
  if (count_) backend.fill(state1_.f(), count_, 0.f);
  if (base_.kind == OptimizerKind::adam) {
    state2_ = DeviceBuffer(backend, count_ * sizeof(float));
    if (count_) backend.fill(state2_.f(), count_, 0.f);
  }
  if (clip_norm_ > 0) {
    sumsq_ = DeviceBuffer(backend, sizeof(double));
    zero_ = DeviceBuffer(backend, sizeof(double));
    scale_ = DeviceBuffer(backend, sizeof(float));
    const double zero = 0.0;
    backend.copy_to_device(zero_.as<void>(), &zero, sizeof zero);
  }
}

void Optimizer::step(float* params, const float* grads, double lr) {
  launch(next_step(lr), params, grads);
}

OptimizerStep Optimizer::next_step(double lr) {
  OptimizerStep s = base_;
  s.lr = static_cast<float>(lr);
  s.t = ++steps_;
  return s;
}

void Optimizer::launch(const OptimizerStep& s, float* params, const float* grads) {
  const float* grad_scale = nullptr;
  if (clip_norm_ > 0) {
    backend_.copy(sumsq_.as<void>(), zero_.as<void>(), sizeof(double));
    backend_.sum_squares(grads, count_, sumsq_.as<double>());
    backend_.clip_scale(sumsq_.as<double>(), clip_norm_, scale_.f());
    grad_scale = scale_.f();
  }
  backend_.optimizer_step(s, params, grads, state1_.f(), state2_.f(), count_, grad_scale);
}

}  // namespace sweep::trainer
