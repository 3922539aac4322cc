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

namespace sweep::trainer {

struct BatchShare {
  int begin = 0;  // first row within the batch
  int count = 0;  // rows; 0 when the batch is smaller than the number of replicas
};

inline BatchShare batch_share(int batch, int replicas, int replica) {
  const int base = batch / replicas, extra = batch % replicas;
  return {replica * base + std::min(replica, extra), base + (replica < extra ? 1 : 0)};
}

}  // namespace sweep::trainer
