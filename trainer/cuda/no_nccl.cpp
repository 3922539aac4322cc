/*
 * no_nccl.cpp — make_nccl_communicator in a CUDA build where NCCL was not found: a trial on
 * several GPUs is refused with the reason before anything trains.
 */
#include "common/check.h"
#include "trainer/cuda_entry.h"
#include "trainer/parallel/communicator.h"

namespace sweep::trainer {

std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<Backend*>&) {
  throw Error(
      "a trial on several GPUs needs NCCL, and this build has none (NCCL was not found next to "
      "the CUDA toolkit when sweep was built): install NCCL and rebuild, or use "
      "resources.gpus_per_trial: 1");
}

}  // namespace sweep::trainer
