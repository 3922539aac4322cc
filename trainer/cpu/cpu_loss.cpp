/*
 * cpu_loss.cpp — softmax cross-entropy and argmax over (n, classes) logits; mean squared error of
 * one output per sample.
 *
 * Each sample's loss is log-sum-exp around its maximum (no overflow for large logits); per-sample
 * losses go to a scratch array and are added in sample order afterwards, so the batch total does
 * not depend on which thread handled which sample. Labels are checked before any work: a label
 * outside [0, classes) is a data error the user must hear about, not a silent NaN.
 */
#include <cmath>
#include <string>

#include "common/check.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {

namespace {

int first_argmax(const float* row, int classes) {
  int best = 0;
  for (int j = 1; j < classes; ++j)
    if (row[j] > row[best]) best = j;
  return best;
}

}  // namespace

void CpuBackend::softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n,
                                       int classes, float* dlogits, double* stats, int mean_over) {
  for (int i = 0; i < n; ++i)
    if (labels[i] < 0 || labels[i] >= classes)
      throw Error("softmax_cross_entropy: label " + std::to_string(labels[i]) + " of sample " +
                  std::to_string(i) + " is outside [0, " + std::to_string(classes) + ")");
  double* per_sample = double_scratch(2 * std::size_t(n));  // loss, correct
  const float inv_n = 1.f / static_cast<float>(mean_over);
  const std::size_t grain = std::max<std::size_t>(1, 4096 / std::max(classes, 1));
  run([&] {
    cpu::for_range(std::size_t(n), grain, [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) {
        const float* row = logits + i * classes;
        const int best = first_argmax(row, classes);
        const double top = row[best];
        double sum = 0;
        for (int j = 0; j < classes; ++j) sum += std::exp(double(row[j]) - top);
        const double lse = top + std::log(sum);
        per_sample[2 * i] = lse - row[labels[i]];
        per_sample[2 * i + 1] = best == labels[i] ? 1.0 : 0.0;
        if (dlogits) {
          float* d = dlogits + i * classes;
          for (int j = 0; j < classes; ++j)
            d[j] = static_cast<float>(std::exp(double(row[j]) - lse)) * inv_n;
          d[labels[i]] -= inv_n;
        }
      }
    });
  });
  double loss = 0, correct = 0;
  for (int i = 0; i < n; ++i) {
    loss += per_sample[2 * i];
    correct += per_sample[2 * i + 1];
  }
  stats[0] += loss;
  stats[1] += correct;
}

// The error and its gradient in float (pred - target, then 2 * e / mean_over: two roundings, as
// the CUDA kernel does them); the statistics from it in double, added in sample order.
void CpuBackend::mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                                    double* stats, int mean_over) {
  const float inv_n = 1.f / static_cast<float>(mean_over);
  double sse = 0, sae = 0;
  for (int i = 0; i < n; ++i) {
    const float e = pred[i] - targets[i];
    if (dpred) dpred[i] = (2.f * e) * inv_n;
    sse += double(e) * double(e);
    sae += std::fabs(double(e));
  }
  stats[0] += sse;
  stats[1] += sae;
}

void CpuBackend::argmax(const float* logits, int n, int classes, std::int32_t* pred) {
  run([&] {
    cpu::for_range(std::size_t(n), 1024, [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) pred[i] = first_argmax(logits + i * classes, classes);
    });
  });
}

}  // namespace sweep::trainer
