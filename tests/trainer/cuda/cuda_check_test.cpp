// check.h on the GPU libraries' statuses: an allocation failure of CUDA, cuDNN or cuBLAS is marked
// CallError::out_of_memory() (a fused array waits for room on it instead of failing a member:
// cublasCreate says CUBLAS_STATUS_ALLOC_FAILED on a full device), any other failure is not. Needs
// the libraries, not a device: runs in CI too.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include "common/check.h"
#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/cuda/cuda_raii.h"

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

// A cuDNN handle's own calls fail with an internal error on a nearly full device (all but a few
// hundred MB held): marked out of memory then, and only then. Needs a device.
TEST(CudaCheck, CudnnHandleFailuresOnAFullDeviceAreMarkedOutOfMemory) {
  SWEEP_SKIP_WITHOUT_CUDA();
  using trainer::cuda::check_cudnn_handle_call;
  const auto handle_call = [](cudnnStatus_t s) {
    return [s] { check_cudnn_handle_call(s, "cudnnCreate(&h)", __FILE__, __LINE__); };
  };
  EXPECT_TRUE(out_of_memory_of(handle_call(CUDNN_STATUS_ALLOC_FAILED)));
  EXPECT_FALSE(out_of_memory_of(handle_call(CUDNN_STATUS_INTERNAL_ERROR)));  // room to spare
  EXPECT_FALSE(out_of_memory_of(handle_call(CUDNN_STATUS_BAD_PARAM)));
  // All but 64 MB held.
  std::size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  void* hog = nullptr;
  ASSERT_GT(free, std::size_t{64} << 20);
  ASSERT_EQ(cudaMalloc(&hog, free - (std::size_t{64} << 20)), cudaSuccess);
  EXPECT_TRUE(out_of_memory_of(handle_call(CUDNN_STATUS_INTERNAL_ERROR)));
  EXPECT_FALSE(out_of_memory_of(handle_call(CUDNN_STATUS_BAD_PARAM)));
  cudaFree(hog);
}

}  // namespace
}  // namespace sweep
