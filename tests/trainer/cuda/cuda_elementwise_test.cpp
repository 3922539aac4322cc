/*
 * cuda_elementwise_test.cpp — the CUDA backend's elementwise ops (cuda_elementwise.cu): fill, ReLU,
 * products, dropout, against the CPU backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include <cstring>
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, FillReluMul) {
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{100003}}) {
    auto x = twin_random(n), y = twin_out(n), dy = twin_random(n), dx = twin_out(n);
    cpu->relu_forward(x.cf(), y.cf(), n);
    gpu->relu_forward(x.gf(), y.gf(), n);
    expect_close(y, 0, 0, "relu_forward n=" + std::to_string(n));
    cpu->relu_backward(y.cf(), dy.cf(), dx.cf(), n);
    gpu->relu_backward(y.gf(), dy.gf(), dx.gf(), n);
    expect_close(dx, 0, 0, "relu_backward n=" + std::to_string(n));
    auto z = twin_out(n);
    cpu->mul(x.cf(), dy.cf(), z.cf(), n);
    gpu->mul(x.gf(), dy.gf(), z.gf(), n);
    expect_close(z, 0, 0, "mul n=" + std::to_string(n));
    // A residual sum with its ReLU: the CPU adds then clamps, CUDA does both in one pass.
    cpu->add_relu(x.cf(), dy.cf(), z.cf(), n);
    gpu->add_relu(x.gf(), dy.gf(), z.gf(), n);
    expect_close(z, 0, 0, "add_relu n=" + std::to_string(n));
    cpu->fill(z.cf(), n, 0.25f);
    gpu->fill(z.gf(), n, 0.25f);
    expect_close(z, 0, 0, "fill n=" + std::to_string(n));
  }
}

// relu(NaN) is NaN on both backends (PyTorch's behaviour); the rest as relu.
TEST_F(CudaOps, ReluForwardKeepsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = random(1000);
  for (std::size_t i = 0; i < x.size(); i += 7) x[i] = nan;
  x[1] = inf;
  x[2] = -inf;
  x[3] = -0.f;
  auto in = twin(x), out = twin_out(x.size());
  cpu->relu_forward(in.cf(), out.cf(), x.size());
  gpu->relu_forward(in.gf(), out.gf(), x.size());
  const auto yc = host(*cpu, out.c.as<void>(), x.size()),
             yg = host(*gpu, out.g.as<void>(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = std::isnan(x[i]) ? nan : (x[i] <= 0.f ? 0.f : x[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(yc[i])) << "cpu at " << i << ": " << yc[i];
      EXPECT_TRUE(std::isnan(yg[i])) << "cuda at " << i << ": " << yg[i];
    } else {
      EXPECT_EQ(yc[i], want) << "cpu at " << i;
      EXPECT_EQ(yg[i], want) << "cuda at " << i;
    }
  }
}

TEST_F(CudaOps, DropoutMatchesCpuBitForBit) {
  for (float p : {0.1f, 0.5f, 0.9f}) {
    const std::size_t n = 77777;
    auto x = twin_random(n), y = twin_out(n), mask = twin_out(n);
    cpu->dropout_forward(x.cf(), y.cf(), mask.cf(), n, p, 1234, 99);
    gpu->dropout_forward(x.gf(), y.gf(), mask.gf(), n, p, 1234, 99);
    const auto mc = host(*cpu, mask.c.as<void>(), n), mg = host(*gpu, mask.g.as<void>(), n);
    EXPECT_EQ(0, std::memcmp(mc.data(), mg.data(), n * 4)) << "dropout mask, p=" << p;
    const auto yc = host(*cpu, y.c.as<void>(), n), yg = host(*gpu, y.g.as<void>(), n);
    EXPECT_EQ(0, std::memcmp(yc.data(), yg.data(), n * 4)) << "dropout output, p=" << p;
    const auto kept = std::count_if(mc.begin(), mc.end(), [](float m) { return m != 0.f; });
    EXPECT_NEAR(double(kept) / n, 1.0 - p, 0.02) << "keep rate";
  }
}

// Growing an empty workspace waits for nothing queued on the stream; growing a used one waits for
// the queued work that may still read it before retiring it. (A fused array's members meet their
// first shape that needs a workspace in the middle of a round, a smaller last batch or a
// validation's: waiting there for each member's queued work would run their validations one
// after another.)

}  // namespace
}  // namespace sweep::trainer::test
