/*
 * optimizer.h — one update of all parameters of a network, from a TrainingSpec.
 *
 * The optimizer owns its state buffers (state1 / state2 of param_count floats, on the backend) and
 * makes exactly one Backend::optimizer_step call per step over the flat parameter array.
 * Gradient clipping by global L2 norm stays on the backend: sum_squares then clip_scale write a
 * device scalar that optimizer_step reads, so clipping costs no host round trip. A step is split
 * into next_step (host bookkeeping: lr, t) and launch (device work), so that a CUDA graph can
 * record launch once and be replayed with each step's next_step values.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "trainer/backend/backend.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

class Optimizer {
 public:
  // Throws sweep::Error for an unknown optimizer or out-of-range hyperparameters.
  Optimizer(Backend& backend, const TrainingSpec& spec, std::size_t param_count);

  // One step at learning rate `lr` (the schedule's value). Increments steps_taken().
  // Equal to launch(next_step(lr), params, grads).
  void step(float* params, const float* grads, double lr);

  // The settings of the next step (lr, Adam's t = steps_taken() + 1) without launching anything;
  // increments steps_taken(). A replayed CUDA graph takes these as its per-step values.
  OptimizerStep next_step(double lr);
  // Launches the update `s` (clipping first when on): the ops a captured step records.
  void launch(const OptimizerStep& s, float* params, const float* grads);

  std::int64_t steps_taken() const { return steps_; }
  void set_steps_taken(std::int64_t t) { steps_ = t; }  // resume

  // State for checkpoints: state1 always holds param_count floats; state2 only for adam (else 0).
  float* state1() { return state1_.f(); }
  float* state2() { return state2_.f(); }
  std::size_t state1_count() const { return state1_.bytes() / sizeof(float); }
  std::size_t state2_count() const { return state2_.bytes() / sizeof(float); }

 private:
  Backend& backend_;
  OptimizerStep base_;
  std::size_t count_;
  float clip_norm_;
  std::int64_t steps_ = 0;
  DeviceBuffer state1_, state2_;
  DeviceBuffer sumsq_, zero_, scale_;  // clipping: double accumulator, a double zero, float scale
};

}  // namespace sweep::trainer
