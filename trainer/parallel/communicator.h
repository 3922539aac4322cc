/*
 * communicator.h — the collectives data-parallel training needs, over the replicas of one trial.
 *
 * A replica is a full copy of the network on one backend (trainer/parallel/replica_set.h). After
 * backward, the replicas' gradients are summed (all_reduce_sum over the flat gradient buffer: all
 * parameters live in one allocation, so this is one call); the first replica's weights and
 * batch-norm statistics are copied to the others where they may differ (broadcast).
 *
 * Two implementations: in-process over CPU replicas (in_process_communicator.cpp; what CI tests
 * the data-parallel logic with, no GPU needed) and NCCL over the GPUs of one machine
 * (trainer/cuda/nccl_communicator.cpp). Calls are asynchronous on each replica's backend, ordered
 * after the work launched there before, and can be recorded in a captured step (CUDA graph).
 */
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"

namespace sweep::trainer {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string name() const = 0;  // "in-process, 2 CPU replicas", "NCCL 2.27.7, 2 GPUs"

  // buffers[r] is replica r's array of n floats, on its backend. Afterwards every buffers[r] holds
  // the element-wise sum over replicas (the same bits on every replica).
  virtual void all_reduce_sum(const std::vector<float*>& buffers, std::size_t n) = 0;
  // Afterwards every buffers[r] holds buffers[0]'s n floats.
  virtual void broadcast(const std::vector<float*>& buffers, std::size_t n) = 0;
};

// For replicas on `backends` (two or more; all CPU, or all CUDA on distinct GPUs). Throws
// sweep::Error saying what is wrong: mixed kinds, a GPU twice, a build without NCCL.
std::unique_ptr<Communicator> make_communicator(const std::vector<Backend*>& backends);

// The in-process implementation alone (CPU backends), for tests.
std::unique_ptr<Communicator> make_in_process_communicator(const std::vector<Backend*>& backends);

}  // namespace sweep::trainer
