/*
 * schedule.h — the learning rate at a given point of training.
 *
 * A pure function of (epoch, iteration), both 0-based and counting what has been completed before
 * the step being taken, so a resumed run gets exactly the rates an uninterrupted run would have.
 * Definitions (base = training.learning_rate, iter = global iteration, max_iter = total
 * iterations): fixed      base piecewise  base * drop_factor^floor(epoch / drop_period) (MATLAB
 * 'piecewise') multistep  base * drop_factor^(number of milestones <= epoch)         (PyTorch
 * MultiStepLR) inv        base * (1 + gamma * iter)^-power                          (Caffe 'inv')
 *   exp        base * gamma^epoch    per EPOCH, as PyTorch's ExponentialLR stepped once an epoch
 *              (not Caffe's per-iteration 'exp'; train_config.h documents the key this way)
 *   poly       base * (1 - iter / max_iter)^power                         (Caffe 'poly')
 *   cosine     min_lr + (base - min_lr) * (1 + cos(pi * iter / max_iter)) / 2
 * Warm-up (warmup_epochs > 0) multiplies any of them, for iter < W = round(warmup_epochs *
 * iterations_per_epoch), by start + (1 - start) * iter / W (start = warmup_start_factor): a linear
 * ramp from start * lr to the scheduled lr, which the schedule reaches at iteration W. The
 * underlying schedule is not shifted by the warm-up.
 */
#pragma once

#include <cstdint>

#include "trainer/train_config.h"

namespace sweep::trainer {

class LearningRateSchedule {
 public:
  // Throws sweep::Error for a value that makes no sense (drop_period < 1,
  // negative rates, warmup_start_factor outside [0, 1]).
  LearningRateSchedule(const ScheduleSpec& spec, double base_lr);

  double at(int epoch, std::int64_t iteration, std::int64_t iterations_per_epoch,
            std::int64_t total_iterations) const;

 private:
  ScheduleSpec spec_;
  double base_;
  ScheduleType type_;
};

}  // namespace sweep::trainer
