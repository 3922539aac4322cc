/*
 * synthetic_sweep.h — a believable sweep as ReportData, for the reports tests and benchmark.
 *
 * The non-obvious decision: the curves follow a simple model of SGD on a small classifier
 * (accuracy saturates faster and higher near a sweet-spot learning rate, larger batches learn a
 * little slower) with seeded noise, so the report's charts look like a real sweep's and the
 * winner is known in advance: the trial nearest lr 0.01, batch size 64. Optional misfits: the
 * largest learning rate with the smallest batch diverges (loss -> NaN), one trial is stopped
 * early, one fails with an error text.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/report_data.h"

namespace sweep::reports::testing {

struct SyntheticSweepOptions {
  std::string name = "synthetic-lr-bs";
  std::vector<double> learning_rates = {0.001, 0.003, 0.01, 0.03, 0.1};
  std::vector<int> batch_sizes = {32, 64, 128};
  std::vector<double> momenta = {0.9};  // a third swept parameter when it has > 1 value
  int epochs = 10;
  int loss_points_per_epoch = 10;  // train_loss is logged this often (per iteration)
  bool with_misfits = true;        // one diverged, one stopped early, one failed trial
  bool with_confusion = true;      // completed trials record a 10x10 confusion matrix
  std::string dataset = "fashion-mnist";
  std::uint64_t seed = 7;
};

ReportData make_synthetic_sweep(const SyntheticSweepOptions& options = {});

}  // namespace sweep::reports::testing
