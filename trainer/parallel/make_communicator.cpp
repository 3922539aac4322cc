/*
 * make_communicator.cpp — picks the collectives for a set of replicas.
 *
 * NCCL lives in the CUDA backend library and is reached only through trainer/cuda_entry.h; a build
 * without it (trainer/cuda/no_nccl.cpp, trainer/no_cuda/) says so when a trial asks for several
 * GPUs, before anything trains.
 */

#include "common/check.h"
#include "trainer/cuda_entry.h"
#include "trainer/parallel/communicator.h"

namespace sweep::trainer {

std::unique_ptr<Communicator> make_communicator(const std::vector<Backend*>& backends) {
  if (backends.size() < 2) throw Error("data-parallel training needs at least two replicas");
  const DeviceKind kind = backends.front()->kind();
  for (const Backend* b : backends)
    if (b->kind() != kind)
      throw Error("the replicas of one trial must all be CPU or all GPUs, not " +
                  backends.front()->name() + " and " + b->name());
  if (kind == DeviceKind::cpu) return make_in_process_communicator(backends);
  return make_nccl_communicator(backends);
}

}  // namespace sweep::trainer
