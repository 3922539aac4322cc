/*
 * loop_state.h — every counter of the training loop that a checkpoint must carry.
 *
 * Kept as one plain struct so that checkpoint.cpp writes and reads exactly what train.cpp uses: a
 * resumed run restores this struct plus the flat buffers (parameters, batch-norm state, optimizer
 * state, best copy) and continues as if it had never stopped. The shuffle order and augmentation
 * draws are functions of (seed, epoch, iteration), so no generator state is needed. It lives in
 * trainer/ itself, beside checkpoint.h, because both the loop (loop/) and the checkpoint file read
 * it: a fact two rooms share sits in the room both include, never in one of them.
 */
#pragma once

#include <cstdint>

namespace sweep::trainer {

// Sums of per-sample losses and correct predictions over `count` samples.
struct LossAccumulator {
  double loss_sum = 0, correct = 0, count = 0;
  void add(double loss, double right, double n) {
    loss_sum += loss;
    correct += right;
    count += n;
  }
  void add(const LossAccumulator& o) { add(o.loss_sum, o.correct, o.count); }
  double mean_loss() const { return count > 0 ? loss_sum / count : 0.0; }
  double accuracy() const { return count > 0 ? correct / count : 0.0; }
  void clear() { *this = {}; }
};

struct LoopState {
  // Progress: the next step is batch `batch_in_epoch` of epoch `epoch` (both 0-based).
  std::int32_t epoch = 0;
  std::int64_t batch_in_epoch = 0;
  std::int64_t iteration = 0;  // steps done, across epochs
  std::int64_t optimizer_steps = 0;
  std::int32_t epochs_completed = 0;
  std::int64_t images_trained = 0;
  double elapsed_seconds = 0;  // training time before this process (resume)

  // Training loss not yet reported, per purpose (log line, validation, epoch).
  LossAccumulator since_log, since_validation, this_epoch, last_epoch;
  // Sums still on the device (accumulated step by step since the last drain). A checkpoint
  // carries them as they are instead of folding them into the sums above: folding early would
  // add the same numbers in another order, and a resumed run's next logged loss would differ
  // from an uninterrupted run's in its last bits.
  LossAccumulator pending;

  // Validation and early stopping.
  std::int32_t validations = 0;
  bool has_last_validation = false;
  double last_val_loss = 0, last_val_accuracy = 0;
  bool has_best = false;
  double best_metric = 0;  // the monitored value at the best validation
  double best_val_loss = 0, best_val_accuracy = 0;
  std::int32_t best_epoch = 0;  // 1-based epoch of the best validation
  std::int64_t best_iteration = 0;
  std::int32_t bad_validations = 0;  // validations since the last improvement
};

}  // namespace sweep::trainer
