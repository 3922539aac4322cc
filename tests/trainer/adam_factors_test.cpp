/*
 * adam_factors_test.cpp — trainer/optim/adam_factors.h against the CPU backend's formula it
 * replaced, bit for bit, over a grid of (lr, beta1, beta2, t).
 *
 * The reference below is that formula as it was written in cpu_optim.cpp (both factors divided in
 * double, rounded to float once). Keeping it bit-identical keeps every CPU training number; the
 * CUDA backend reads the same function, so the backends agree by construction. One grid point
 * shows the float division the CUDA backend used to do differs, which is why there is one.
 */
#include "trainer/optim/adam_factors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sweep::trainer {
namespace {

std::uint32_t bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// The CPU backend's expressions before adam_factors.h.
AdamFactors former_cpu(float lr, float b1, float b2, std::int64_t step) {
  const double t = double(step);
  AdamFactors f{};
  f.step = static_cast<float>(double(lr) / (1.0 - std::pow(double(b1), t)));
  f.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double(b2), t)));
  return f;
}

TEST(AdamFactors, MatchesTheFormerCpuFormulaBitForBit) {
  const std::vector<float> lrs = {1e-5f, 3e-4f, 1e-3f, 0.00123f, 0.01f, 0.1f, 0.5f, 1.f, 3.7f};
  const std::vector<float> beta1s = {0.f, 0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999f};
  const std::vector<float> beta2s = {0.9f, 0.98f, 0.99f, 0.999f, 0.9999f};
  std::vector<std::int64_t> ts;
  for (std::int64_t t = 1; t <= 200; ++t) ts.push_back(t);
  for (std::int64_t t : {500, 1000, 4321, 10000, 100000, 1000000}) ts.push_back(t);
  std::size_t cases = 0;
  for (float lr : lrs)
    for (float b1 : beta1s)
      for (float b2 : beta2s)
        for (std::int64_t t : ts) {
          const AdamFactors got = adam_factors(lr, b1, b2, t);
          const AdamFactors want = former_cpu(lr, b1, b2, t);
          ASSERT_EQ(bits(got.step), bits(want.step)) << lr << " " << b1 << " " << t;
          ASSERT_EQ(bits(got.inv_sqrt_bc2), bits(want.inv_sqrt_bc2)) << b2 << " " << t;
          ++cases;
        }
  EXPECT_EQ(cases, lrs.size() * beta1s.size() * beta2s.size() * ts.size());
}

TEST(AdamFactors, StepOneIsLrOverOneMinusBeta) {
  const AdamFactors f = adam_factors(0.5f, 0.5f, 0.75f, 1);
  EXPECT_EQ(f.step, 1.f);          // 0.5 / (1 - 0.5)
  EXPECT_EQ(f.inv_sqrt_bc2, 2.f);  // 1 / sqrt(1 - 0.75)
}

TEST(AdamFactors, DividingInFloatWouldDifferSomewhere) {
  // The float division (lr / float(1 - beta1^t)) is not the double one rounded once: over this
  // grid some case differs in the last bit, so a second copy of the formula could not agree.
  bool differs = false;
  for (int i = 1; i <= 400 && !differs; ++i) {
    const float lr = 1e-4f * float(i);
    for (float b1 : {0.9f, 0.95f, 0.99f})
      for (std::int64_t t = 1; t <= 50 && !differs; ++t) {
        const float bc1 = static_cast<float>(1.0 - std::pow(double(b1), double(t)));
        differs = bits(lr / bc1) != bits(adam_factors(lr, b1, 0.999f, t).step);
      }
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace sweep::trainer
