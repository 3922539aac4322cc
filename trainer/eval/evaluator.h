/*
 * evaluator.h — loss, accuracy and (optionally) a confusion matrix of a network over a data set;
 * for a regression set the mean squared error, RMSE, MAE and R^2.
 *
 * The data set is uploaded once. Each batch is gathered straight into a labels buffer that covers
 * the whole set, and predictions go into a second one, so one evaluation reads back two doubles
 * (plus, for a confusion matrix, the two label arrays) instead of something per batch.
 *
 * On a backend that records graphs, one full batch's work (gather, forward, loss, argmax) is
 * recorded at the first evaluation and every full batch after replays it at its offset
 * (graph_capture.h, the evaluation graph): a small model's batch costs one launch instead of its
 * library calls' host time. The numbers are those of the eager pass, which the last partial batch
 * keeps.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/data/batch_source.h"
#include "trainer/network.h"

namespace sweep::trainer {

struct EvalResult {
  double loss = 0, accuracy = 0;  // accuracy: classification only
  std::int64_t images = 0;
  std::vector<std::int64_t> confusion;  // classes x classes (true row, predicted column), if asked
  // Regression (loss: the mean squared error): mean absolute error, and the targets' mean and sum
  // of squared deviations from it (combine() merges parts' by Chan's formula: no cancellation for
  // targets of large mean), from which r2() takes their variance.
  bool regression = false;
  double mae = 0;
  double target_mean = 0, target_m2 = 0;
  double rmse() const;
  // 1 - SSE / SST (scikit-learn's r2_score); 0 when the targets are all equal.
  double r2() const;
};

class Evaluator {
 public:
  // `uploaded`: data already in memory the backend reads (BatchSource), or null.
  Evaluator(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch,
            const DeviceDataset* uploaded = nullptr);

  // Forward in inference mode over every image, in two halves, so that several replicas' (or a
  // fused array's members') evaluations run at once: launch queues the work on the backend and
  // returns; collect waits for it and reads the result. `x` is scratch for one batch of inputs.
  void launch(Network& net, float* x, bool with_confusion);
  EvalResult collect();

  std::int64_t size() const { return source_.size(); }
  const std::uint8_t* images() const { return source_.images(); }  // where it reads (tests)

 private:
  // Batch b's work, eagerly (argmax only for a confusion matrix).
  void run_batch(Network& net, float* x, std::int64_t b, bool argmax);
  // The full batches through the evaluation graph, recording it first (after batch 0 eagerly)
  // when the backend holds none of ours for this network and input buffer; returns how many
  // batches it ran (1 when recording failed: the rest of the pass stays eager, as every later one).
  std::int64_t run_recorded(Network& net, float* x, std::int64_t full);

  Backend& backend_;
  BatchSource source_;
  int classes_;                             // 0: regression
  double target_mean_ = 0, target_m2_ = 0;  // of a regression set's targets
  DeviceBuffer labels_, preds_, stats_;
  bool with_confusion_ = false;
  // The evaluation graph: its key on the backend, and the network and input it was recorded for.
  std::uint64_t graph_key_ = 0, graph_net_ = 0;
  const float* graph_x_ = nullptr;
  bool graph_failed_ = false;
};

// The result over the union of disjoint parts (losses and accuracies weighted by images,
// confusion matrices added).
EvalResult combine(const std::vector<EvalResult>& parts);

}  // namespace sweep::trainer
