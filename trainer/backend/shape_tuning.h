/*
 * shape_tuning.h — the optional group of a backend that times its algorithms per shape (cuDNN's
 * Find, our kernels against cuDNN's plans: a few milliseconds per convolution). It does so only
 * for the batch size that matters; other batch sizes (the last partial batch of an epoch or of a
 * validation pass, run once an epoch) take a choice that costs no device time. A backend offers
 * the group by implementing ShapeTuning (Backend::shape_tuning()); one without it times nothing.
 */
#pragma once

namespace sweep::trainer {

class ShapeTuning {
 public:
  virtual ~ShapeTuning() = default;
  // The batch size whose shapes are timed; 0: time every shape.
  virtual void tune_for_batch(int n) = 0;
};

}  // namespace sweep::trainer
