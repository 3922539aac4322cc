/*
 * trainer_trial.cpp — a trial's TrainConfig placed on its slot, its reports
 * (reporting_callback.h), TrainResult → TrialOutcome.
 */
#include "sweep/run/trainer_trial.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "common/metric_names.h"
#include "sweep/run/reporting_callback.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/trial_identity.h"

namespace sweep::run {

std::string checkpoint_path(const std::string& trial_dir) {
  return checkpoint_in(trial_dir).string();
}

sweep::Json summary_of(const trainer::TrainResult& r) {
  namespace key = metric_names::summary;
  sweep::Json summary = {
      {key::kTrainerState, trainer::to_string(r.state)},
      {key::kEpochsCompleted, r.epochs_completed},
      {key::kIterations, r.iterations},
      {key::kBestValLoss, r.best_val_loss},
      {key::kBestValAccuracy, r.best_val_accuracy},
      {key::kBestEpoch, r.best_epoch},
      {key::kFinalValLoss, r.final_val_loss},
      {key::kFinalValAccuracy, r.final_val_accuracy},
      {key::kFinalTrainLoss, r.final_train_loss},
      {key::kFinalTrainAccuracy, r.final_train_accuracy},
      {key::kElapsedSeconds, r.elapsed_seconds},
      {key::kImagesPerSecond, r.images_per_second},
      {key::kDevice, r.device},
  };
  if (r.regression) {
    summary[key::kFinalValRmse] = r.final_val_rmse;
    summary[key::kFinalValMae] = r.final_val_mae;
    summary[key::kFinalValR2] = r.final_val_r2;
  }
  for (auto& [name, value] : summary.items())
    if (value.is_number_float() && !std::isfinite(value.get<double>())) value = nullptr;
  if (r.classes > 0 && r.confusion.size() == static_cast<std::size_t>(r.classes) * r.classes) {
    sweep::Json matrix = sweep::Json::array();
    for (int row = 0; row < r.classes; ++row) {
      sweep::Json counts = sweep::Json::array();
      for (int col = 0; col < r.classes; ++col)
        counts.push_back(r.confusion[row * r.classes + col]);
      matrix.push_back(std::move(counts));
    }
    summary[key::kConfusion] = std::move(matrix);
    summary[key::kClasses] = r.classes;
    // A folder data set's class order, stored with the trial: what label k of its confusion
    // matrix (and of its model) means.
    if (!r.class_names.empty()) summary[key::kClassNames] = r.class_names;
  }
  if (!r.message.empty()) summary[key::kMessage] = r.message;
  return summary;
}

scheduler::TrialOutcome outcome_of(const trainer::TrainResult& r,
                                   const trainer::TrainConfig& config) {
  scheduler::TrialOutcome outcome;
  outcome.summary = summary_of(r);
  switch (r.state) {
    case trainer::RunState::completed:
      outcome.state = TrialState::completed;
      break;
    case trainer::RunState::early_stopped: {
      const auto& stopping = config.training.early_stopping;
      outcome.state = TrialState::stopped_early;
      outcome.message = "patience " + std::to_string(stopping.patience) + " on " +
                        std::string(trainer::name_of(stopping.monitor));
      if (!r.message.empty()) outcome.message += ": " + r.message;
      break;
    }
    case trainer::RunState::stopped_by_callback:
      // The executor replaces this with the stop's own kind and reason (ASHA's rung, a cancel).
      outcome.state = TrialState::stopped_early;
      outcome.message = r.message;
      break;
    case trainer::RunState::diverged:
      outcome.state = TrialState::diverged;
      outcome.message = r.message.empty() ? "the loss became NaN or infinite" : r.message;
      break;
    case trainer::RunState::interrupted:
      outcome.state = TrialState::interrupted;
      outcome.message = r.message;
      break;
  }
  return outcome;
}

trainer::TrainConfig place_trial(const TrainerTrialInput& in, scheduler::TrialContext& context) {
  trainer::TrainConfig config = in.config();
  context.set_epochs(config.training.epochs);  // no stopping rule ends its last epoch
  const scheduler::Device& device = context.device();
  config.device.kind = device.kind == scheduler::DeviceKind::cuda ? trainer::DeviceKind::cuda
                                                                  : trainer::DeviceKind::cpu;
  config.device.index = device.index;
  config.device.threads = in.cpu_threads;
  // A multi-GPU trial: one replica per GPU the executor gave it (data parallel).
  if (context.devices().size() > 1)
    for (const scheduler::Device& d : context.devices()) {
      trainer::DeviceSpec replica = config.device;
      replica.index = d.index;
      config.replicas.push_back(replica);
    }
  if (config.device.kind == trainer::DeviceKind::cpu &&
      config.training.precision != trainer::Precision::fp32)
    context.log("training.precision " + std::string(trainer::name_of(config.training.precision)) +
                " applies on a GPU; the CPU backend computes in fp32");
  return config;
}

trainer::RunControl trial_control(const TrainerTrialInput& in, const trainer::TrainConfig& config,
                                  scheduler::TrialContext& context) {
  std::filesystem::create_directories(in.trial_dir);
  trainer::RunControl control;
  control.checkpoint_path = checkpoint_path(in.trial_dir);
  if (config.training.save_model) control.model_path = model_in(in.trial_dir).string();
  control.resume = in.resume;
  control.identity = trial_identity(in.sweep_name, in.trial_number, config);
  control.set_aside_unusable_checkpoint = in.retried;
  control.note = [&context, notice = in.notice, number = in.trial_number](const std::string& line) {
    context.log(line);
    if (notice) notice("trial " + std::to_string(number) + ": " + line);
  };
  control.interrupt = &context.interrupt_flag();
  control.checkpoint_written = in.checkpoint_written;
  if (in.resume && std::filesystem::exists(control.checkpoint_path))
    context.log("resuming from " + control.checkpoint_path);
  return control;
}

std::exception_ptr with_checkpoint_hint(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const trainer::CheckpointError& e) {
    return std::make_exception_ptr(
        Error(std::string(e.what()) +
              " (sweep resume --retry-failed sets it aside and trains the trial from the start)"));
  } catch (...) {
    return error;
  }
}

void log_end(scheduler::TrialContext& context, const trainer::TrainResult& result) {
  context.log(std::string("ended ") + trainer::to_string(result.state) +
              (result.message.empty() ? "" : ": " + result.message));
}

scheduler::TrialFn make_trainer_trial(TrainerTrialInput input) {
  if (!input.config) throw Error("trainer trial: no config function given");
  auto shared = std::make_shared<const TrainerTrialInput>(std::move(input));
  return [shared](scheduler::TrialContext& context) -> scheduler::TrialOutcome {
    const TrainerTrialInput& in = *shared;
    const trainer::TrainConfig config = place_trial(in, context);
    const trainer::RunControl control = trial_control(in, config, context);
    ReportingCallback callback(context, config.training.epochs);
    trainer::TrainResult result;
    try {
      result = trainer::train(config, callback, control);
    } catch (const trainer::CheckpointError&) {
      std::rethrow_exception(with_checkpoint_hint(std::current_exception()));
    }
    log_end(context, result);
    return outcome_of(result, config);
  };
}

}  // namespace sweep::run
