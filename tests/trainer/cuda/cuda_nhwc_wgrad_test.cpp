/*
 * cuda_nhwc_wgrad_test.cpp — our TF32 weight gradient on fp32 NHWC activations (nhwc_wgrad.h)
 * against the CPU's fp32 weight gradient on the same values: shapes with odd rows and widths
 * (padded positions), every tile count it takes, gradients larger than a block's tile, several
 * images a block, its scratch and output poisoned with NaN first
 * (every partial must be written), the same bits on a second run, and the shapes it refuses.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/cuda/nhwc_wgrad.h"

namespace sweep::trainer::test {
namespace {

ConvGeom same3x3(int n, int c, int h, int w, int k) {
  ConvGeom g{};
  g.n = n;
  g.c = c;
  g.h = h;
  g.w = w;
  g.k = k;
  g.r = g.s = 3;
  g.stride_h = g.stride_w = 1;
  g.pad_h = g.pad_w = 1;
  g.out_h = h;
  g.out_w = w;
  return g;
}

using CudaNhwcWgrad = CudaVsCpu;

TEST_F(CudaNhwcWgrad, MatchesTheCpuWeightGradient) {
  for (const ConvGeom& g :
       {same3x3(3, 16, 7, 7, 16), same3x3(4, 32, 12, 12, 32), same3x3(2, 32, 5, 20, 64),
        same3x3(2, 64, 6, 33, 32), same3x3(2, 128, 4, 8, 16), same3x3(2, 16, 3, 64, 128),
        same3x3(16, 32, 32, 32, 32),
        // Tiles of the filters and channels (64 x 64 and 128 x 128 in 32 x 64 tiles, 48
        // channels in three of 16), and several images a block with a shorter last block.
        same3x3(3, 64, 8, 8, 64), same3x3(2, 128, 4, 4, 128), same3x3(3, 48, 6, 6, 16),
        same3x3(4, 64, 16, 16, 128), same3x3(601, 16, 4, 4, 16)}) {
    char what_c[64];
    std::snprintf(what_c, sizeof what_c, "n%d c%d %dx%d k%d", g.n, g.c, g.h, g.w, g.k);
    const std::string what = what_c;
    ASSERT_TRUE(cuda::nhwc_wgrad_fits(g)) << what;
    const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                      ny = std::size_t(g.n) * g.k * g.h * g.w, nw = std::size_t(g.k) * g.c * 9;
    auto x = twin_random(nx), dy = twin_random(ny), w = twin_random(nw), dw = twin_out(nw);
    cpu->conv2d_backward(g, x.cf(), w.cf(), dy.cf(), nullptr, dw.cf(), nullptr);
    // The GPU's operands in NHWC, its scratch poisoned.
    DeviceBuffer xh(*gpu, nx * 4), dyh(*gpu, ny * 4),
        scratch(*gpu, cuda::nhwc_wgrad_scratch_floats(g) * 4);
    gpu->to_storage(Storage::fp32_nhwc, x.gf(), xh.as<void>(), g.n, g.c, g.h * g.w);
    gpu->to_storage(Storage::fp32_nhwc, dy.gf(), dyh.as<void>(), g.n, g.k, g.h * g.w);
    gpu->fill(scratch.f(), cuda::nhwc_wgrad_scratch_floats(g),
              std::numeric_limits<float>::quiet_NaN());
    cuda::nhwc_wgrad(g, xh.f(), dyh.f(), dw.gf(), scratch.f(), gpu->joined_stream());
    const auto ref = host(*cpu, dw.c.as<void>(), nw), got = host(*gpu, dw.g.as<void>(), nw);
    double scale = 0;
    for (float v : ref) scale = std::max(scale, double(std::fabs(v)));
    // TF32 products (10-bit mantissa), fp32 sums.
    expect_close(ref, got, 4e-3 * scale, 1e-2, what + " dw");
    cuda::nhwc_wgrad(g, xh.f(), dyh.f(), dw.gf(), scratch.f(), gpu->joined_stream());
    EXPECT_EQ(got, host(*gpu, dw.g.as<void>(), nw)) << what << ": a second run's bits";
  }
}

TEST(CudaNhwcWgradShapes, RefusesWhatItDoesNotTake) {
  ConvGeom g = same3x3(2, 32, 8, 8, 32);
  EXPECT_TRUE(cuda::nhwc_wgrad_fits(g));
  ConvGeom strided = g;
  strided.stride_h = strided.stride_w = 2;
  strided.out_h = strided.out_w = 4;
  EXPECT_FALSE(cuda::nhwc_wgrad_fits(strided));
  EXPECT_FALSE(cuda::nhwc_wgrad_fits(same3x3(2, 24, 8, 8, 32)));   // 24 channels
  EXPECT_FALSE(cuda::nhwc_wgrad_fits(same3x3(2, 32, 8, 8, 40)));   // 40 filters
  EXPECT_FALSE(cuda::nhwc_wgrad_fits(same3x3(2, 16, 8, 65, 16)));  // rows of 65
  ConvGeom five = g;
  five.r = five.s = 5;
  five.pad_h = five.pad_w = 2;
  EXPECT_FALSE(cuda::nhwc_wgrad_fits(five));
}

}  // namespace
}  // namespace sweep::trainer::test
