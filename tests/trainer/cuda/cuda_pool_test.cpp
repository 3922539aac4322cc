/*
 * cuda_pool_test.cpp — the CUDA backend's pooling (cuda_pool.cu): cuDNN's, our 2x2 max pooling with
 * its argmax bytes, and a convolution that pools its own outputs, against the CPU backend (fixture
 * and tolerances: cuda_ops_fixture.h).
 */
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, PoolForwardBackward) {
  const PoolGeom geoms[] = {
      pool_geom(64, 20, 24, 24, 2, 2, 0),  // LeNet (max: our 2x2 kernels)
      pool_geom(2, 3, 13, 11, 2, 2, 0),    // 2x2 with a trailing odd row and column
      pool_geom(2, 3, 12, 9, 2, 2, 0),     // 2x2, a trailing odd column only
      pool_geom(2, 3, 9, 12, 2, 2, 0),     // 2x2, a trailing odd row only (rows as float2)
      pool_geom(3, 4, 13, 11, 3, 2, 1),    // overlapping, padded, odd
      pool_geom(1, 2, 7, 7, 3, 1, 1),      // batch 1, stride 1
  };
  // Share 8: a fused array's member, whose 2x2 max pooling takes four windows a thread.
  for (int share : {1, 8}) {
    gpu->set_gpu_share(share);
    for (const PoolGeom& g : geoms) {
      for (PoolMode mode : {PoolMode::max, PoolMode::average}) {
        const std::string tag = "share " + std::to_string(share) + " " +
                                std::string(mode == PoolMode::max ? "maxpool" : "avgpool") + " " +
                                std::to_string(g.h) + "x" + std::to_string(g.w) + " k" +
                                std::to_string(g.kh) + " s" + std::to_string(g.stride_h) + " p" +
                                std::to_string(g.pad_h);
        const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
        const std::size_t ys = std::size_t(g.n) * g.c * g.out_h * g.out_w;
        auto x = twin_random(xs), y = twin_out(ys);
        cpu->pool_forward(g, mode, x.cf(), y.cf());
        gpu->pool_forward(g, mode, x.gf(), y.gf());
        expect_close(y, 1e-6, 1e-6, tag + " y");
        auto dy = twin_random(ys), dx = twin_out(xs);
        cpu->pool_backward(g, mode, x.cf(), y.cf(), dy.cf(), dx.cf());
        gpu->pool_backward(g, mode, x.gf(), y.gf(), dy.gf(), dx.gf());
        expect_close(dx, 1e-5, 1e-5, tag + " dx");
      }
    }
  }
}

// Pool2d's path for every 2x2 max pooling: the forward keeps each window's argmax, the backward
// reads it instead of x and y. The same y and dx as the CPU's pool_forward / pool_backward (and so
// as the GPU's own), with ties, at a lone step's share and a fused member's.
TEST_F(CudaOps, MaxPool2x2ArgmaxGivesThePoolingsBits) {
  const PoolGeom geoms[] = {
      pool_geom(64, 20, 24, 24, 2, 2, 0),  // LeNet's first pooling
      pool_geom(64, 50, 8, 8, 2, 2, 0),    // and its second
      pool_geom(2, 3, 13, 11, 2, 2, 0),    // a trailing odd row and column
      pool_geom(2, 3, 12, 9, 2, 2, 0),     // a trailing odd column only
      pool_geom(2, 3, 9, 12, 2, 2, 0),     // a trailing odd row only
  };
  for (int share : {1, 8}) {
    gpu->set_gpu_share(share);
    for (const PoolGeom& g : geoms) {
      const std::string tag = "share " + std::to_string(share) + " " + std::to_string(g.n) + "x" +
                              std::to_string(g.c) + "x" + std::to_string(g.h) + "x" +
                              std::to_string(g.w);
      const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
      const std::size_t ys = std::size_t(g.n) * g.c * g.out_h * g.out_w;
      std::vector<float> xv = host(*cpu, twin_random(xs).c.as<void>(), xs);
      std::fill(xv.begin(), xv.begin() + 2 * g.w, 0.f);  // a row of windows of ties
      xv[2 * g.w + 2] = xv[2 * g.w + 3] = 5.f;           // two equal maxima
      auto x = twin(xv), y = twin_out(ys), dy = twin_random(ys), dx = twin_out(xs);
      DeviceBuffer argmax(*gpu, ys);
      cpu->pool_forward(g, PoolMode::max, x.cf(), y.cf());
      cpu->pool_backward(g, PoolMode::max, x.cf(), y.cf(), dy.cf(), dx.cf());
      gpu->maxpool2x2_forward_argmax(g, x.gf(), y.gf(), argmax.as<std::uint8_t>());
      gpu->maxpool2x2_backward_argmax(g, argmax.as<std::uint8_t>(), dy.gf(), dx.gf());
      expect_close(y, 0, 0, tag + " y");
      expect_close(dx, 0, 0, tag + " dx");
    }
  }
}

// A convolution followed by its 2x2 max pooling (Conv2d::fuse_maxpool_after): on our tiled kernel
// the outputs are pooled in shared memory; the pooled values and argmax must be those of the
// convolution then the pooling, bit for bit (the CPU's, whose sums run in another order, within
// tolerance), for LeNet's layers at a lone step's share and a fused member's, with a partial batch.
TEST_F(CudaOps, ConvolutionPooledInSharedMemoryGivesTheUnfusedBits) {
  const ConvGeom lenet1 = conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0),
                 lenet2 = conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0);
  // Planned for a whole 132-SM GPU both layers pool; for a 16th of it (a fused array's member)
  // the second layer's blocks already hold 115 KB, and with their tile one would hold an SM alone.
  EXPECT_TRUE(cuda::tiled_conv_pool_fits(lenet1, 132));
  EXPECT_TRUE(cuda::tiled_conv_pool_fits(lenet1, 8));
  EXPECT_TRUE(cuda::tiled_conv_pool_fits(lenet2, 132));
  EXPECT_FALSE(cuda::tiled_conv_pool_fits(lenet2, 8));
  for (int share : {1, 8}) {
    gpu = std::make_unique<cuda::CudaBackend>(0);
    gpu->set_gpu_share(share);
    gpu->set_direct_conv(cuda::CudaBackend::DirectConv::tiled);
    for (const ConvGeom& g : {lenet1, conv_geom(32, 1, 28, 28, 20, 5, 5, 1, 0) /* partial */,
                              conv_geom(3, 1, 28, 28, 20, 5, 5, 1, 0) /* 3 images */, lenet2,
                              conv_geom(3, 4, 12, 10, 8, 3, 3, 1, 1) /* 3x3, padded */}) {
      const std::string tag = "share " + std::to_string(share) + " c" + std::to_string(g.c) + " k" +
                              std::to_string(g.k) + " n" + std::to_string(g.n);
      const PoolGeom pg = maxpool2x2_of(g);
      const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
      const std::size_t ws = std::size_t(g.k) * g.c * g.r * g.s;
      const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
      const std::size_t ps = std::size_t(pg.n) * pg.c * pg.out_h * pg.out_w;
      auto x = twin_random(xs), w = twin_random(ws), b = twin_random(g.k);
      auto y = twin_out(ys), pooled = twin_out(ps), y2 = twin_out(ys), pooled2 = twin_out(ps);
      DeviceBuffer argmax(*gpu, ps), argmax2(*gpu, ps);
      gpu->conv2d_forward(g, x.gf(), w.gf(), b.gf(), y.gf());
      gpu->maxpool2x2_forward_argmax(pg, y.gf(), pooled.gf(), argmax.as<std::uint8_t>());
      gpu->conv2d_forward_maxpool2x2(g, x.gf(), w.gf(), b.gf(), y2.gf(), pooled2.gf(),
                                     argmax2.as<std::uint8_t>());
      const auto p1 = host(*gpu, pooled.g.as<void>(), ps);
      const auto p2 = host(*gpu, pooled2.g.as<void>(), ps);
      EXPECT_EQ(std::memcmp(p1.data(), p2.data(), ps * sizeof(float)), 0) << tag << " pooled";
      std::vector<std::uint8_t> a1(ps), a2(ps), ac(ps);
      gpu->copy_to_host(a1.data(), argmax.as<void>(), ps);
      gpu->copy_to_host(a2.data(), argmax2.as<void>(), ps);
      EXPECT_EQ(a1, a2) << tag << " argmax";
      cpu->conv2d_forward_maxpool2x2(g, x.cf(), w.cf(), b.cf(), y2.cf(), pooled2.cf(), ac.data());
      expect_close(pooled2, 1e-3, kEps, tag + " pooled against the CPU");
    }
  }
}

// training.deterministic: a small convolution runs our kernels, summing in the order of their plans
// for a quarter of the device whatever the share (cut for the share where that keeps the order), so
// that a fused array's member computes its lone run's bits (CudaArray's tests compare whole runs).
// Every share must give the bits of our kernels as a default backend plans them for a quarter of
// the device (share 4): forward, pooled forward, data, weight and bias gradients. With the plans
// following the share (a mutant build) this test and five CudaArray tests fail.
TEST_F(CudaOps, MaxPoolTiesRouteToExactlyOneInput) {
  // After a relu most windows are all zeros: each window's gradient must land once, not per tie.
  const PoolGeom g = pool_geom(2, 3, 8, 8, 2, 2, 0);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w, ys = std::size_t(g.n) * g.c * 16;
  auto x = twin(std::vector<float>(xs, 0.f)), y = twin_out(ys), dy = twin_random(ys, 0.5f, 1.f);
  auto dx = twin_out(xs);
  gpu->pool_forward(g, PoolMode::max, x.gf(), y.gf());
  gpu->pool_backward(g, PoolMode::max, x.gf(), y.gf(), dy.gf(), dx.gf());
  const auto d = host(*gpu, dx.g.as<void>(), xs), up = host(*gpu, dy.g.as<void>(), ys);
  const double sum_dx = std::accumulate(d.begin(), d.end(), 0.0);
  const double sum_dy = std::accumulate(up.begin(), up.end(), 0.0);
  EXPECT_NEAR(sum_dx, sum_dy, 1e-3) << "gradient mass must be routed exactly once per window";
  // ... and to the same element as on the CPU (the first in row-major window order).
  cpu->pool_forward(g, PoolMode::max, x.cf(), y.cf());
  cpu->pool_backward(g, PoolMode::max, x.cf(), y.cf(), dy.cf(), dx.cf());
  expect_close(dx, 0, 0, "tied maxpool dx");
}

}  // namespace
}  // namespace sweep::trainer::test
