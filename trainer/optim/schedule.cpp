/*
 * schedule.cpp — the formulas of schedule.h, in double.
 *
 * Computed in double and rounded to float only when handed to the optimizer, so 1 - iter/max_iter
 * and cos() near the end of a long run do not lose digits.
 */
#include "trainer/optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "trainer/config_keys.h"

namespace sweep::trainer {

LearningRateSchedule::LearningRateSchedule(const ScheduleSpec& spec, double base_lr)
    : spec_(spec), base_(base_lr), type_(spec.type) {
  // The key table's ranges (trainer/config_keys.h), as the YAML reader applies them.
  TrainingSpec training;
  training.learning_rate = base_lr;
  training.schedule = spec;
  check_training_keys(training);
}

double LearningRateSchedule::at(int epoch, std::int64_t iteration,
                                std::int64_t iterations_per_epoch,
                                std::int64_t total_iterations) const {
  const double iter = double(iteration);
  const double max_iter = double(std::max<std::int64_t>(total_iterations, 1));
  double lr = base_;
  switch (type_) {
    case ScheduleType::fixed:
      break;
    case ScheduleType::piecewise:
      lr = base_ * std::pow(spec_.drop_factor, double(epoch / spec_.drop_period));
      break;
    case ScheduleType::multistep: {
      const auto passed = std::count_if(spec_.milestones.begin(), spec_.milestones.end(),
                                        [&](int m) { return m <= epoch; });
      lr = base_ * std::pow(spec_.drop_factor, double(passed));
      break;
    }
    case ScheduleType::inv:
      lr = base_ * std::pow(1.0 + spec_.gamma * iter, -spec_.power);
      break;
    case ScheduleType::exp:
      lr = base_ * std::pow(spec_.gamma, double(epoch));
      break;
    case ScheduleType::poly:
      lr = base_ * std::pow(std::max(0.0, 1.0 - iter / max_iter), spec_.power);
      break;
    case ScheduleType::cosine:
      lr = spec_.min_lr +
           (base_ - spec_.min_lr) *
               (1.0 + std::cos(std::numbers::pi * std::min(iter, max_iter) / max_iter)) / 2.0;
      break;
  }
  const double warmup_iters = std::round(spec_.warmup_epochs * double(iterations_per_epoch));
  if (warmup_iters > 0 && iter < warmup_iters) {
    const double start = spec_.warmup_start_factor;
    lr *= start + (1.0 - start) * iter / warmup_iters;
  }
  return lr;
}

}  // namespace sweep::trainer
