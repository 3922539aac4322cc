/*
 * batch_share.h — which part of a mini-batch each data-parallel replica takes.
 *
 * training.batch_size is the global mini-batch (MATLAB's convention; Caffe's batch_size is per
 * GPU). Replica r of R takes a contiguous run of the batch's rows, the sizes differing by at most
 * one (the first b % R replicas take one more). An uneven split is exact, not approximate: every
 * replica's loss is divided by the whole batch's size (Backend::softmax_cross_entropy's
 * mean_over), so the summed gradients are the whole batch's mean gradient.
 */
#pragma once

#include <algorithm>
#include <cstdint>

namespace sweep::trainer {

// Part `part` of `total` items cut into `parts` contiguous runs whose sizes differ by at most one
// (the first total % parts runs take one more): how a batch, and the validation set, are shared.
struct Share {
  std::int64_t begin = 0, count = 0;
};
inline Share contiguous_share(std::int64_t total, int parts, int part) {
  const std::int64_t base = total / parts, extra = total % parts;
  return {part * base + std::min<std::int64_t>(part, extra), base + (part < extra ? 1 : 0)};
}

struct BatchShare {
  int begin = 0;  // first row within the batch
  int count = 0;  // rows; 0 when the batch is smaller than the number of replicas
};

inline BatchShare batch_share(int batch, int replicas, int replica) {
  const Share s = contiguous_share(batch, replicas, replica);
  return {static_cast<int>(s.begin), static_cast<int>(s.count)};
}

}  // namespace sweep::trainer
