/*
 * monitor.h — which metric decides "best" and early stopping, and whether a value improves on it.
 *
 * MATLAB's ValidationPatience / Keras' EarlyStopping semantics: a value improves when it beats the
 * best so far by more than min_delta; training stops once `patience` evaluations in a row have not
 * improved (patience 0 = never). The same rule picks the output network when output_network is
 * best.
 */
#pragma once

#include <string>

#include "trainer/vocabulary.h"

namespace sweep::trainer {

class Monitor {
 public:
  // Throws sweep::Error for a negative min_delta or patience.
  Monitor(MonitorMetric metric, double min_delta, int patience);

  bool needs_validation() const { return metric_ != MonitorMetric::train_loss; }
  const std::string& name() const { return name_; }
  int patience() const { return patience_; }

  // The monitored value out of an evaluation point's numbers.
  double pick(double val_loss, double val_accuracy, double train_loss) const;
  // Whether `value` improves on `best` (always true when there is no best yet).
  bool improves(double value, bool has_best, double best) const;

 private:
  MonitorMetric metric_;
  std::string name_;
  double min_delta_;
  int patience_;
};

}  // namespace sweep::trainer
