/*
 * monitor.cpp — the comparison in one place, so "best" and early stopping can never disagree.
 */
#include "trainer/loop/monitor.h"

#include "common/check.h"

namespace sweep::trainer {

Monitor::Monitor(MonitorMetric metric, double min_delta, int patience)
    : metric_(metric), name_(name_of(metric)), min_delta_(min_delta), patience_(patience) {
  if (min_delta < 0) throw Error("training.early_stopping.min_delta must be >= 0");
  if (patience < 0) throw Error("training.early_stopping.patience must be >= 0 (0 = off)");
}

double Monitor::pick(double val_loss, double val_accuracy, double train_loss) const {
  switch (metric_) {
    case MonitorMetric::val_loss:
      return val_loss;
    case MonitorMetric::val_accuracy:
      return val_accuracy;
    case MonitorMetric::train_loss:
      return train_loss;
  }
  return val_loss;
}

bool Monitor::improves(double value, bool has_best, double best) const {
  if (!has_best) return true;
  return metric_ == MonitorMetric::val_accuracy ? value > best + min_delta_
                                                : value < best - min_delta_;
}

}  // namespace sweep::trainer
