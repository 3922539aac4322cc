/*
 * evaluator.h — loss, accuracy and (optionally) a confusion matrix of a network over a data set.
 *
 * The data set is uploaded once. Each batch is gathered straight into a labels buffer that covers
 * the whole set, and predictions go into a second one, so one evaluation reads back two doubles
 * (plus, for a confusion matrix, the two label arrays) instead of something per batch.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "trainer/backend.h"
#include "trainer/data/batch_source.h"
#include "trainer/network.h"

namespace sweep::trainer {

struct EvalResult {
  double loss = 0, accuracy = 0;
  std::int64_t images = 0;
  std::vector<std::int64_t> confusion;  // classes x classes (true row, predicted column), if asked
};

class Evaluator {
 public:
  Evaluator(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch);

  // Forward in inference mode over every image, in two halves, so that several replicas' (or a
  // fused array's members') evaluations run at once: launch queues the work on the backend and
  // returns; collect waits for it and reads the result. `x` is scratch for one batch of inputs.
  void launch(Network& net, float* x, bool with_confusion);
  EvalResult collect();

  std::int64_t size() const { return source_.size(); }

 private:
  Backend& backend_;
  BatchSource source_;
  int classes_;
  DeviceBuffer labels_, preds_, stats_;
  bool with_confusion_ = false;
};

// The result over the union of disjoint parts (losses and accuracies weighted by images,
// confusion matrices added).
EvalResult combine(const std::vector<EvalResult>& parts);

}  // namespace sweep::trainer
