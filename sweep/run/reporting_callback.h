/*
 * reporting_callback.h — the trainer's callbacks as a trial's reports (TrainCallback →
 * TrialContext), for a trial alone (trainer_trial) and for each member of a fused array
 * (trainer_array).
 *
 * Every log_every iterations the running training loss is reported as `loss` with epoch 0 ("not
 * at an epoch boundary") and a fractional epoch position for charts; each validation reports
 * train_loss / train_accuracy (means since the previous validation), val_loss, val_accuracy,
 * learning_rate and images_per_second (a regression run: train_mae for train_accuracy, and
 * val_rmse, val_mae, val_r2 for val_accuracy; its losses are mean squared errors; every name from
 * common/metric_names.h, which the report reads too), and only validations at the end of an epoch
 * carry their epoch: the stopping rules compare trials at equal epochs and must never judge one on
 * a mid-epoch value. Two names, because one (trial, name, step) key holds one value. A stop request
 * other than an interrupt (ASHA, cancel, timeout) makes the callback return false; an interrupt is
 * the trainer's own business (RunControl::interrupt: checkpoint, then end).
 */
#pragma once

#include <cstdint>
#include <string>

#include "common/format.h"
#include "common/metric_names.h"
#include "scheduler/trial.h"
#include "trainer/train.h"

namespace sweep::run {

class ReportingCallback : public trainer::TrainCallback {
 public:
  ReportingCallback(scheduler::TrialContext& context, int epochs)
      : context_(context), epochs_(epochs) {}

  bool on_iteration(const trainer::IterationInfo& info) override {
    iterations_per_epoch_ = info.iterations_per_epoch;
    if (info.has_loss) {
      scheduler::MetricPoint point;
      // The running mean since the last log point; train_loss is per validation.
      point.name = metric_names::kLoss;
      point.value = info.train_loss;
      point.step = info.iteration;
      point.epoch_position =
          info.iterations_per_epoch > 0
              ? static_cast<double>(info.iteration) / static_cast<double>(info.iterations_per_epoch)
              : 0.0;
      context_.report(point);
    }
    // Progress at the loss reports (every log_every steps and at each epoch's end), not every
    // step: a fused array's thread runs this for each member's every step, and each call takes
    // the trial's locks and reaches every sink (over MPI, a message to rank 0).
    if (info.has_loss && info.total_iterations > 0)
      context_.set_progress(
          static_cast<double>(info.iteration) / static_cast<double>(info.total_iterations),
          "epoch " + std::to_string(info.epoch) + "/" + std::to_string(epochs_));
    return keep_going();
  }

  bool on_validation(const trainer::ValidationInfo& v) override {
    const std::int64_t epoch = v.epoch_end ? v.epoch : 0;
    const double position =
        iterations_per_epoch_ > 0
            ? static_cast<double>(v.iteration) / static_cast<double>(iterations_per_epoch_)
            : static_cast<double>(epoch);
    const auto report = [&](const char* name, double value) {
      scheduler::MetricPoint point;
      point.name = name;
      point.value = value;
      point.step = v.iteration;
      point.epoch = epoch;
      point.epoch_position = position;
      context_.report(point);
    };
    report(metric_names::kTrainLoss, v.train_loss);
    report(v.regression ? metric_names::kTrainMae : metric_names::kTrainAccuracy,
           v.regression ? v.train_mae : v.train_accuracy);
    report(metric_names::kLearningRate, v.learning_rate);
    report(metric_names::kImagesPerSecond, v.images_per_second);
    report(metric_names::kValLoss, v.val_loss);
    if (v.regression) {
      report(metric_names::kValRmse, v.val_rmse);
      report(metric_names::kValMae, v.val_mae);
      report(metric_names::kValR2, v.val_r2);
    } else {
      report(metric_names::kValAccuracy, v.val_accuracy);
    }
    const std::string quality =
        v.regression ? " val_rmse " + fixed(v.val_rmse, 4) + " val_r2 " + fixed(v.val_r2, 4)
                     : " val_accuracy " + fixed(v.val_accuracy, 4);
    context_.log("epoch " + std::to_string(v.epoch) + (v.epoch_end ? "" : " (mid-epoch)") +
                 " iteration " + std::to_string(v.iteration) + ": train_loss " +
                 fixed(v.train_loss, 4) + " val_loss " + fixed(v.val_loss, 4) + quality + " lr " +
                 fixed(v.learning_rate, 6) + " " + fixed(v.images_per_second, 0) + " images/s");
    return keep_going();
  }

 private:
  // An interrupt is the trainer's own business (RunControl::interrupt: checkpoint, then end);
  // every other stop ends the run through the callback.
  bool keep_going() const {
    return !(context_.should_stop() && context_.stop_kind() != scheduler::StopKind::interrupt);
  }

  scheduler::TrialContext& context_;
  int epochs_;
  std::int64_t iterations_per_epoch_ = 0;
};

}  // namespace sweep::run
