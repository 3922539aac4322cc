// check.h on the GPU libraries' statuses: an allocation failure of CUDA, cuDNN or cuBLAS is marked
// CallError::out_of_memory() (a fused array waits for room on it instead of failing a member:
// cublasCreate said CUBLAS_STATUS_ALLOC_FAILED on a full H100), any other failure is not. Needs the
// libraries, not a device: runs in CI too.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include "common/check.h"

namespace sweep {
namespace {

template <class Status>
Status returns(Status s) {
  return s;
}

template <class Fn>
bool out_of_memory_of(Fn&& fn) {
  try {
    fn();
  } catch (const CallError& e) {
    // A reworded error (the caller's words around the cause) keeps the mark.
    const CallError reworded("in the caller's words", e);
    EXPECT_EQ(reworded.out_of_memory(), e.out_of_memory());
    return e.out_of_memory();
  }
  ADD_FAILURE() << "no CallError";
  return false;
}

TEST(CudaCheck, AllocationFailuresAreMarkedOutOfMemory) {
  EXPECT_TRUE(out_of_memory_of([] { SWEEP_CHECK_CUDA(returns(cudaErrorMemoryAllocation)); }));
  EXPECT_TRUE(out_of_memory_of([] { SWEEP_CHECK_CUDNN(returns(CUDNN_STATUS_ALLOC_FAILED)); }));
  EXPECT_TRUE(out_of_memory_of([] { SWEEP_CHECK_CUBLAS(returns(CUBLAS_STATUS_ALLOC_FAILED)); }));
  EXPECT_FALSE(out_of_memory_of([] { SWEEP_CHECK_CUDA(returns(cudaErrorInvalidValue)); }));
  EXPECT_FALSE(out_of_memory_of([] { SWEEP_CHECK_CUDNN(returns(CUDNN_STATUS_BAD_PARAM)); }));
  EXPECT_FALSE(out_of_memory_of([] { SWEEP_CHECK_CUBLAS(returns(CUBLAS_STATUS_INVALID_VALUE)); }));
}

}  // namespace
}  // namespace sweep
