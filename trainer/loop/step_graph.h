/*
 * step_graph.h — where the training loop stands with recording its step as a CUDA graph.
 *
 * backend.h's protocol needs one eager step with the full-batch shapes in this process before the
 * recording, and the recording's batch index within the epoch (replays pass their offset from it
 * into the epoch's index array). Nothing here goes into a checkpoint: the graph lives in the
 * backend, so a resumed run warms up and records again.
 */
#pragma once

#include <cstdint>

namespace sweep::trainer {

// off: the backend cannot capture, the model has dropout (its mask counter changes each step), or
// a recording failed; cold: waiting for an eager full batch; warm: the next full batch records;
// captured: full batches replay.
class StepGraph {
 public:
  void allow() { mode_ = Mode::cold; }
  void saw_full_batch() {
    if (mode_ == Mode::cold) mode_ = Mode::warm;
  }
  bool wants_graph() const { return mode_ == Mode::warm || mode_ == Mode::captured; }
  bool captured() const { return mode_ == Mode::captured; }
  bool allowed() const { return mode_ != Mode::off; }  // cold, warm or captured
  void captured_at(std::int64_t batch_in_epoch) {
    mode_ = Mode::captured;
    captured_batch_ = batch_in_epoch;
  }
  std::int64_t captured_batch() const { return captured_batch_; }  // batch index in its epoch
  void failed() { mode_ = Mode::off; }

 private:
  enum class Mode { off, cold, warm, captured };
  Mode mode_ = Mode::off;
  std::int64_t captured_batch_ = 0;
};

}  // namespace sweep::trainer
