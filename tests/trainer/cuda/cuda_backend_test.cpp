/*
 * cuda_backend_test.cpp — the CUDA backend's memory (cuda_backend.cu): allocation, copies and the
 * grow-only convolution workspace, against the CPU backend where there is one to compare (fixture:
 * cuda_ops_fixture.h).
 */
#include <cuda_runtime.h>

#include <algorithm>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, AnEmptyWorkspaceGrowsWithoutWaiting) {
  constexpr int kN = 4096;
  const std::size_t n = std::size_t(kN) * kN;
  DeviceBuffer a(*gpu, n * 4), y(*gpu, n * 4);
  gpu->fill(a.f(), n, 1e-3f);
  gpu->synchronize();
  const auto queue_work = [&] {  // about a tenth of a second of products on the stream, or more
    for (int i = 0; i < 48; ++i) gpu->dense_forward(a.f(), a.f(), nullptr, y.f(), kN, kN, kN);
  };
  queue_work();
  EXPECT_NE(gpu->conv_workspace(std::size_t(1) << 20), nullptr);
  EXPECT_EQ(cudaStreamQuery(gpu->joined_stream()), cudaErrorNotReady)
      << "growing the empty workspace waited for the stream's queued work";
  gpu->synchronize();
  queue_work();
  EXPECT_NE(gpu->conv_workspace(std::size_t(2) << 20), nullptr);
  EXPECT_EQ(cudaStreamQuery(gpu->joined_stream()), cudaSuccess)
      << "the old workspace was retired while queued work could still read it";
}
TEST_F(CudaOps, CopiesRoundTrip) {
  const auto v = random(1000);
  DeviceBuffer a(*gpu, 4000), b(*gpu, 4000);
  gpu->copy_to_device(a.as<void>(), v.data(), 4000);
  gpu->copy(b.as<void>(), a.as<void>(), 4000);
  EXPECT_EQ(host(*gpu, b.as<void>(), 1000), v);
  EXPECT_EQ(std::string(gpu->name()).rfind("cuda:0", 0), 0u) << gpu->name();
  EXPECT_EQ(gpu->kind(), DeviceKind::cuda);
}

TEST_F(CudaOps, AllocateZeroes) {
  DeviceBuffer a(*gpu, 1 << 20);
  const auto v = host(*gpu, a.as<void>(), (1 << 20) / 4);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](float x) { return x == 0.f; }));
}

}  // namespace
}  // namespace sweep::trainer::test
