/*
 * train.h — the training engine's public entry point: train(config, callback, control).
 *
 * The callback is MATLAB's OutputFcn: it sees every iteration and every validation and may ask to
 * stop. The trainer never throws for a diverging loss: the run ends with state `diverged`. It does
 * throw (sweep::Error) for bad input (missing data files, impossible shapes) and device failures,
 * and the caller records that as a failed run.
 */
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainer/checkpoint.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

struct IterationInfo {
  int epoch = 0;               // 1-based
  std::int64_t iteration = 0;  // 1-based, across epochs
  std::int64_t iterations_per_epoch = 0;
  std::int64_t total_iterations = 0;
  double learning_rate = 0;
  bool has_loss = false;  // true every training.log_every iterations (and epoch ends)
  double train_loss = 0;  // mean over the iterations since the last report
  double train_accuracy = 0;
  double images_per_second = 0;
  double elapsed_seconds = 0;
};

struct ValidationInfo {
  int epoch = 0;
  std::int64_t iteration = 0;
  bool epoch_end = false;
  double val_loss = 0, val_accuracy = 0;
  double train_loss = 0, train_accuracy = 0;  // means since the last validation
  // A regression run (classes == 0): the losses are mean squared errors, there is no accuracy
  // (0), and these are reported instead: the validation set's RMSE, MAE and R^2, and the mean
  // absolute error since the last validation.
  bool regression = false;
  double val_rmse = 0, val_mae = 0, val_r2 = 0, train_mae = 0;
  double learning_rate = 0;
  double images_per_second = 0;
  double elapsed_seconds = 0;
};

class TrainCallback {
 public:
  virtual ~TrainCallback() = default;
  // Return false to stop the run (state stopped_by_callback).
  virtual bool on_iteration(const IterationInfo&) { return true; }
  virtual bool on_validation(const ValidationInfo&) { return true; }
};

enum class RunState { completed, early_stopped, stopped_by_callback, diverged, interrupted };
Words<RunState> words_of(RunState);
const char* to_string(RunState s);

struct RunControl {
  std::string checkpoint_path;                   // where checkpoints go ("" = none)
  bool resume = false;                           // continue from checkpoint_path when it exists
  const std::atomic<bool>* interrupt = nullptr;  // set: save a checkpoint, end as `interrupted`
  // Called (on the training thread) after each checkpoint is written: a trial on another rank of
  // a cluster sends the file to rank 0 at once.
  std::function<void(const std::string& path)> checkpoint_written;
  // Whose run this is: written into every checkpoint, and required of the one resumed from (a
  // checkpoint of another trial or run is refused, with the reason, as the run's error).
  CheckpointIdentity identity{};
  // A checkpoint to resume from that cannot be used (unreadable, another trial's): false, the run
  // fails with the reason; true, it is set aside (set_aside_checkpoint: renamed, kept) and the run
  // trains from the start, telling `note`. What a retry of a failed trial asks for.
  bool set_aside_unusable_checkpoint = false;
  // Lines for the run's log about its checkpoint: one set aside, one without an identity read.
  // Called on the thread that starts the run; may be empty.
  std::function<void(const std::string& line)> note{};
  // Where the trained network goes when the run ends with weights to keep (completed, early
  // stopped, stopped by the callback): the output network (training.output_network) as a model
  // file (trainer/model_file.h). "" = nowhere.
  std::string model_path{};
};

struct TrainResult {
  RunState state = RunState::completed;
  std::string message;  // why it ended, for people
  int epochs_completed = 0;
  std::int64_t iterations = 0;
  double best_val_loss = 0, best_val_accuracy = 0;  // of the output network
  int best_epoch = 0;
  double final_val_loss = 0, final_val_accuracy = 0;
  double final_train_loss = 0, final_train_accuracy = 0;
  // A regression run: the output network's validation RMSE, MAE and R^2 (accuracies are 0).
  bool regression = false;
  double final_val_rmse = 0, final_val_mae = 0, final_val_r2 = 0;
  std::vector<std::int64_t>
      confusion;  // classes x classes (true row, predicted column), output net
  int classes = 0;
  // The classes' names in label order (a folder data set's class folders); empty: numbers.
  std::vector<std::string> class_names;
  double elapsed_seconds = 0;
  double images_per_second = 0;
  std::string device;  // backend name
};

TrainResult train(const TrainConfig& config, TrainCallback& callback,
                  const RunControl& control = {});

}  // namespace sweep::trainer
