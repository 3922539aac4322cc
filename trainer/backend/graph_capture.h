/*
 * graph_capture.h — the optional group of recorded steps: one training step, and one evaluation
 * batch, captured once and replayed (CUDA graphs). A backend offers the group by implementing
 * GraphCapture (Backend::graph_capture()); on one without it the training loop runs every step
 * eagerly and the evaluator every batch.
 */
#pragma once

#include <cstdint>

#include "trainer/backend/backend_types.h"

namespace sweep::trainer {

class GraphCapture {
 public:
  virtual ~GraphCapture() = default;

  // One training step. Protocol: run one step eagerly (every shape seen), then begin_capture();
  // <the step's ops exactly as eager>; end_capture() — the captured ops have NOT run — then
  // replay(...) for this and every later step with the same shapes. While capturing,
  // optimizer_step and gather_batch read their per-step values (learning rate, Adam's t,
  // augmentation step, index offset) from a device block that replay() refreshes: `index_delta`
  // is the number of index rows between this step's indices pointer and the one seen at capture.
  // Dropout cannot be captured (its counter varies).
  virtual void begin_capture() = 0;
  virtual void end_capture() = 0;
  virtual void replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta) = 0;
  virtual void drop_graph() = 0;

  // A second recorded graph, of one evaluation batch (gather, inference forward, loss, argmax),
  // replayed for each full batch of an evaluation pass (Evaluator). Eager, each batch of a small
  // model costs its library calls' host time (cuDNN's legacy calls above all), which is what a
  // fused array's many members' validations wait on; a replay is one launch. Protocol: run one
  // such batch eagerly, begin_evaluation_capture(key); <that batch's ops for the batch at rows r
  // of the pass>; end_capture(); then replay_evaluation(first, step, count) runs the batches at
  // rows r + first, r + first + step, ... (count of them): each offset is added to the index
  // pointer and to the label arrays' pointers (gather's labels or targets out, the loss's labels
  // or targets in, argmax's predictions out) seen at capture. The offsets are made on the device,
  // so the host queues a whole pass without waiting for any of it. `key` names the recording's
  // owner: has_evaluation_graph(key) is false once another owner has recorded, or after
  // drop_evaluation_graph(). The step's graph stays valid throughout.
  virtual void begin_evaluation_capture(std::uint64_t key) = 0;
  virtual bool has_evaluation_graph(std::uint64_t key) const = 0;
  virtual void replay_evaluation(std::int64_t first, std::int64_t step, std::int64_t count) = 0;
  virtual void drop_evaluation_graph() = 0;
};

}  // namespace sweep::trainer
