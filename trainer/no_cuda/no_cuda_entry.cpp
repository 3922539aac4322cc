/*
 * no_cuda_entry.cpp — trainer/cuda_entry.h's door in a build without the CUDA backend
 * (SWEEP_WITH_CUDA=OFF): no device, and a clear refusal for anything that asks for one.
 */
#include "common/check.h"
#include "trainer/cuda_entry.h"
#include "trainer/parallel/communicator.h"

namespace sweep::trainer {

namespace {
[[noreturn]] void refuse() {
  throw Error(
      "this build has no CUDA backend (configured with SWEEP_WITH_CUDA=OFF): rebuild with "
      "SWEEP_WITH_CUDA=ON on a machine with the CUDA toolkit, or run on the CPU");
}
}  // namespace

bool cuda_backend_linked() { return false; }

std::unique_ptr<Backend> make_cuda_backend(const DeviceSpec&) { refuse(); }

int cuda_device_count_impl() { return 0; }

void warm_up_cuda_device(int) {}

std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<Backend*>&) { refuse(); }

}  // namespace sweep::trainer
