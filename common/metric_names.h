/*
 * metric_names.h — the names of the metric series the built-in trainer writes and of the summary
 * keys its trials store: one spelling for the writer (sweep/run) and every reader (the report,
 * `sweep serve`, tests), so a series is never written under one name and looked up under another.
 *
 * External programs name their own metrics; the report reads these names when they are present.
 */
#pragma once

#include <string_view>

namespace sweep::metric_names {

// Series, one point per validation (train_loss also per log_every iterations as `loss`).
inline constexpr char kLoss[] = "loss";  // every log_every iterations
inline constexpr char kTrainLoss[] = "train_loss";
inline constexpr char kTrainAccuracy[] = "train_accuracy";  // classification
inline constexpr char kTrainMae[] = "train_mae";            // regression
inline constexpr char kLearningRate[] = "learning_rate";
inline constexpr char kImagesPerSecond[] = "images_per_second";
inline constexpr char kValLoss[] = "val_loss";
inline constexpr char kValAccuracy[] = "val_accuracy";  // classification
inline constexpr char kValRmse[] = "val_rmse";          // regression
inline constexpr char kValMae[] = "val_mae";
inline constexpr char kValR2[] = "val_r2";

// The name a store written before kImagesPerSecond existed holds that series under. Read only
// through series_name(), where the report loads a store; never written.
inline constexpr char kImagesPerSecondBefore[] = "images_per_sec";

// The series a stored name stands for: an older store's name read as today's.
constexpr std::string_view series_name(std::string_view stored) {
  return stored == kImagesPerSecondBefore ? std::string_view(kImagesPerSecond) : stored;
}

// Summary keys of a built-in trainer trial (TrainResult's fields).
namespace summary {
inline constexpr char kTrainerState[] = "trainer_state";
inline constexpr char kEpochsCompleted[] = "epochs_completed";
inline constexpr char kIterations[] = "iterations";
inline constexpr char kBestValLoss[] = "best_val_loss";
inline constexpr char kBestValAccuracy[] = "best_val_accuracy";
inline constexpr char kBestEpoch[] = "best_epoch";
inline constexpr char kFinalValLoss[] = "final_val_loss";
inline constexpr char kFinalValAccuracy[] = "final_val_accuracy";
inline constexpr char kFinalTrainLoss[] = "final_train_loss";
inline constexpr char kFinalTrainAccuracy[] = "final_train_accuracy";
inline constexpr char kFinalValRmse[] = "final_val_rmse";
inline constexpr char kFinalValMae[] = "final_val_mae";
inline constexpr char kFinalValR2[] = "final_val_r2";
inline constexpr char kElapsedSeconds[] = "elapsed_seconds";
inline constexpr char kImagesPerSecond[] = "images_per_second";
inline constexpr char kDevice[] = "device";
inline constexpr char kConfusion[] = "confusion";  // classes × classes (true, predicted)
inline constexpr char kClasses[] = "classes";
inline constexpr char kClassNames[] = "class_names";
inline constexpr char kMessage[] = "message";
}  // namespace summary

}  // namespace sweep::metric_names
