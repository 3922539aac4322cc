/*
 * monitor.cpp — the comparison in one place, so "best" and early stopping can never disagree.
 */
#include "trainer/loop/monitor.h"

#include "common/check.h"

namespace sweep::trainer {

Monitor::Monitor(const std::string& metric, double min_delta, int patience)
    : name_(metric), min_delta_(min_delta), patience_(patience) {
  if (metric == "val_loss")
    metric_ = Metric::val_loss;
  else if (metric == "val_accuracy")
    metric_ = Metric::val_accuracy;
  else if (metric == "train_loss")
    metric_ = Metric::train_loss;
  else
    throw Error("training.early_stopping.monitor: '" + metric +
                "' is not one of val_loss, val_accuracy, train_loss");
  if (min_delta < 0) throw Error("training.early_stopping.min_delta must be >= 0");
  if (patience < 0) throw Error("training.early_stopping.patience must be >= 0 (0 = off)");
}

double Monitor::pick(double val_loss, double val_accuracy, double train_loss) const {
  switch (metric_) {
    case Metric::val_loss:
      return val_loss;
    case Metric::val_accuracy:
      return val_accuracy;
    case Metric::train_loss:
      return train_loss;
  }
  return val_loss;
}

bool Monitor::improves(double value, bool has_best, double best) const {
  if (!has_best) return true;
  return metric_ == Metric::val_accuracy ? value > best + min_delta_ : value < best - min_delta_;
}

}  // namespace sweep::trainer
