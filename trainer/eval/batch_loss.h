/*
 * batch_loss.h — the one place the loop chooses its loss: softmax cross-entropy over class
 * labels, or the mean squared error of the one output over float targets for a regression set
 * (classes == 0). A regression target is a second kind of label and a second loss, not a second
 * trainer: everything else (gather, forward, backward, update, the statistics' two sums) is the
 * same. The statistics' second sum is the correct predictions of a classifier, the absolute
 * errors of a regression.
 */
#pragma once

#include <cstdint>

#include "trainer/backend/backend.h"

namespace sweep::trainer {

// out: the network's (n, outputs); y: the gather's (n) int32 labels or float targets.
inline void batch_loss(Backend& backend, int classes, const float* out, const void* y, int n,
                       float* dout, double* stats, int mean_over) {
  if (classes == 0)
    backend.mean_squared_error(out, static_cast<const float*>(y), n, dout, stats, mean_over);
  else
    backend.softmax_cross_entropy(out, static_cast<const std::int32_t*>(y), n, classes, dout, stats,
                                  mean_over);
}

}  // namespace sweep::trainer
