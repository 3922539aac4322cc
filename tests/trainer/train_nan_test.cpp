/*
 * train_nan_test.cpp — a NaN reaching a ReLU stays NaN, as in PyTorch, so the training loop's
 * divergence check sees it in the loss instead of a silently zeroed activation.
 *
 * Checked on the CPU backend's op directly (the CUDA twin is in tests/trainer/cuda/):
 * `x > 0 ? x : 0` maps NaN to 0, `x <= 0 ? 0 : x` keeps it; every other value is unchanged.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "trainer/backend/backend.h"

namespace sweep::trainer {
namespace {

TEST(TrainNaN, CpuReluForwardKeepsNaN) {
  auto cpu = make_backend({DeviceKind::cpu, 0, 1});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {nan, -1.f, 0.f, -0.f, 2.5f, inf, -inf, -nan};
  DeviceBuffer in(*cpu, x.size() * 4), out(*cpu, x.size() * 4);
  cpu->copy_to_device(in.as<void>(), x.data(), x.size() * 4);
  cpu->relu_forward(in.f(), out.f(), x.size());
  std::vector<float> y(x.size());
  cpu->copy_to_host(y.data(), out.as<void>(), y.size() * 4);
  EXPECT_TRUE(std::isnan(y[0])) << y[0];
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], 0.f);
  EXPECT_EQ(y[3], 0.f);
  EXPECT_EQ(y[4], 2.5f);
  EXPECT_EQ(y[5], inf);
  EXPECT_EQ(y[6], 0.f);
  EXPECT_TRUE(std::isnan(y[7])) << y[7];
}

}  // namespace
}  // namespace sweep::trainer
