/*
 * cuda_ops_test.cpp — every Backend op of the CUDA backend against the CPU backend.
 *
 * Fresh random inputs per run (the seed is printed on failure), outputs poisoned with NaN first,
 * several shapes per op (stride 2, padding, batch 1, odd sizes). Tolerances are fp32's: the two
 * backends sum in different orders, so results agree to rounding, not bit for bit, except where
 * the contract says bit for bit (gather, dropout), which is checked with memcmp.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "tests/cuda/cuda_test_util.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::test {
namespace {

constexpr double kTol = 2e-4, kEps = 2e-4;  // elementwise fp32 vs fp32 with other sum orders

ConvGeom conv_geom(int n, int c, int h, int w, int k, int r, int s, int stride, int pad) {
  ConvGeom g{n, c, h, w, k, r, s, stride, stride, pad, pad, 0, 0};
  g.out_h = (h + 2 * pad - r) / stride + 1;
  g.out_w = (w + 2 * pad - s) / stride + 1;
  return g;
}

PoolGeom pool_geom(int n, int c, int h, int w, int k, int stride, int pad) {
  PoolGeom g{n, c, h, w, k, k, stride, stride, pad, pad, 0, 0};
  g.out_h = (h + 2 * pad - k) / stride + 1;
  g.out_w = (w + 2 * pad - k) / stride + 1;
  return g;
}

class CudaOps : public CudaVsCpu {
 protected:
  // Forward (with and without bias) and backward (with and without dx and db) of `g` on both
  // backends.
  void check_conv(const ConvGeom& g);
};

void CudaOps::check_conv(const ConvGeom& g) {
  const std::string tag =
      "conv n" + std::to_string(g.n) + " c" + std::to_string(g.c) + " " + std::to_string(g.h) +
      "x" + std::to_string(g.w) + " k" + std::to_string(g.k) + " " + std::to_string(g.r) + "x" +
      std::to_string(g.s) + " s" + std::to_string(g.stride_h) + " p" + std::to_string(g.pad_h);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ws = std::size_t(g.k) * g.c * g.r * g.s;
  const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  auto x = twin_random(xs), w = twin_random(ws), b = twin_random(g.k), y = twin_out(ys);
  cpu->conv2d_forward(g, x.cf(), w.cf(), b.cf(), y.cf());
  gpu->conv2d_forward(g, x.gf(), w.gf(), b.gf(), y.gf());
  expect_close(y, 1e-3, kEps, tag + " y");
  auto y2 = twin_out(ys);  // without bias
  cpu->conv2d_forward(g, x.cf(), w.cf(), nullptr, y2.cf());
  gpu->conv2d_forward(g, x.gf(), w.gf(), nullptr, y2.gf());
  expect_close(y2, 1e-3, kEps, tag + " y (no bias)");
  auto dy = twin_random(ys), dx = twin_out(xs), dw = twin_out(ws), db = twin_out(g.k);
  cpu->conv2d_backward(g, x.cf(), w.cf(), dy.cf(), dx.cf(), dw.cf(), db.cf());
  gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), dx.gf(), dw.gf(), db.gf());
  expect_close(dx, 1e-3, kEps, tag + " dx");
  expect_close(dw, 2e-3, kEps, tag + " dw");
  expect_close(db, 2e-3, kEps, tag + " db");
  // dx may be skipped (first layer); dw overwritten, not accumulated.
  auto dw2 = twin_random(ws);
  gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), nullptr, dw2.gf(), nullptr);
  cpu->conv2d_backward(g, x.cf(), w.cf(), dy.cf(), nullptr, dw2.cf(), nullptr);
  expect_close(dw2, 2e-3, kEps, tag + " dw (overwrite)");
}

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
// validation's: waiting there for each member's queued work ran their validations one after
// another, 1.1 s more for 64 LeNets on an H200 whose epoch ended on a full batch.)
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

TEST_F(CudaOps, DenseForwardBackward) {
  struct Case {
    int n, in, out;
    bool bias, dx;
  };
  // out <= 32: our skinny kernels (a classifier head); wider: cuBLAS. Share 8 (a fused array's
  // member): a 10-class head's forward takes a warp per row, and must give the bits of share 1's.
  for (const Case c :
       {Case{64, 800, 500, true, true}, Case{1, 17, 3, true, true}, Case{33, 129, 10, false, false},
        Case{256, 500, 10, true, true}, Case{256, 2048, 32, true, true},
        Case{64, 500, 33, true, true}, Case{7, 4099, 1, true, false}})
    for (int share : {1, 8}) {
      gpu->set_gpu_share(share);
      const std::string tag = "share " + std::to_string(share) + " dense " + std::to_string(c.n) +
                              "x" + std::to_string(c.in) + "->" + std::to_string(c.out);
      auto x = twin_random(std::size_t(c.n) * c.in), w = twin_random(std::size_t(c.out) * c.in);
      auto b = twin_random(c.out), y = twin_out(std::size_t(c.n) * c.out);
      cpu->dense_forward(x.cf(), w.cf(), c.bias ? b.cf() : nullptr, y.cf(), c.n, c.in, c.out);
      gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y.gf(), c.n, c.in, c.out);
      expect_close(y, 1e-3, kEps, tag + " y");
      if (c.out <= 32) {  // our kernels: share 1's bits
        gpu->set_gpu_share(1);
        auto y1 = twin_out(std::size_t(c.n) * c.out);
        gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y1.gf(), c.n, c.in, c.out);
        EXPECT_EQ(0, std::memcmp(host(*gpu, y.g.as<void>(), std::size_t(c.n) * c.out).data(),
                                 host(*gpu, y1.g.as<void>(), std::size_t(c.n) * c.out).data(),
                                 std::size_t(c.n) * c.out * 4))
            << tag << ": not the bits of the lone step's kernel";
        gpu->set_gpu_share(share);
      }
      auto dy = twin_random(std::size_t(c.n) * c.out), dx = twin_out(std::size_t(c.n) * c.in);
      auto dw = twin_out(std::size_t(c.out) * c.in), db = twin_out(c.out);
      cpu->dense_backward(x.cf(), w.cf(), dy.cf(), c.dx ? dx.cf() : nullptr, dw.cf(),
                          c.bias ? db.cf() : nullptr, c.n, c.in, c.out);
      gpu->dense_backward(x.gf(), w.gf(), dy.gf(), c.dx ? dx.gf() : nullptr, dw.gf(),
                          c.bias ? db.gf() : nullptr, c.n, c.in, c.out);
      if (c.dx) expect_close(dx, 1e-3, kEps, tag + " dx");
      expect_close(dw, 1e-3, kEps, tag + " dw");
      if (c.bias) expect_close(db, 1e-3, kEps, tag + " db");
    }
}

// A dense layer with the ReLU after it (forward) or before it (backward) folded in: against the
// CPU backend (whose defaults run the two ops), and bit for bit against the CUDA backend's own
// two ops, skinny kernels and cuBLAS alike.
TEST_F(CudaOps, DenseWithReluFoldedIn) {
  struct Case {
    int n, in, out;
    bool bias;
  };
  for (const Case c : {Case{64, 800, 500, true}, Case{64, 500, 10, true}, Case{1, 17, 3, false},
                       Case{256, 2048, 32, true}, Case{33, 129, 40, false}}) {
    const std::string tag =
        "dense " + std::to_string(c.n) + "x" + std::to_string(c.in) + "->" + std::to_string(c.out);
    const std::size_t nx = std::size_t(c.n) * c.in, ny = std::size_t(c.n) * c.out;
    auto x = twin_random(nx), w = twin_random(std::size_t(c.out) * c.in);
    auto b = twin_random(c.out), y = twin_out(ny), y2 = twin_out(ny);
    cpu->dense_forward_relu(x.cf(), w.cf(), c.bias ? b.cf() : nullptr, y.cf(), c.n, c.in, c.out);
    gpu->dense_forward_relu(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y.gf(), c.n, c.in, c.out);
    expect_close(y, 1e-3, kEps, tag + " relu(y)");
    gpu->dense_forward(x.gf(), w.gf(), c.bias ? b.gf() : nullptr, y2.gf(), c.n, c.in, c.out);
    gpu->relu_forward(y2.gf(), y2.gf(), ny);
    EXPECT_EQ(0, std::memcmp(host(*gpu, y.g.as<void>(), ny).data(),
                             host(*gpu, y2.g.as<void>(), ny).data(), ny * 4))
        << tag << ": the folded forward differs from dense_forward + relu_forward";

    auto dy = twin_random(ny), dx = twin_out(nx), dx2 = twin_out(nx);
    auto dw = twin_out(std::size_t(c.out) * c.in), db = twin_out(c.out);
    cpu->dense_backward_relu_input(x.cf(), w.cf(), dy.cf(), dx.cf(), dw.cf(),
                                   c.bias ? db.cf() : nullptr, c.n, c.in, c.out);
    gpu->dense_backward_relu_input(x.gf(), w.gf(), dy.gf(), dx.gf(), dw.gf(),
                                   c.bias ? db.gf() : nullptr, c.n, c.in, c.out);
    expect_close(dx, 1e-3, kEps, tag + " dx through the ReLU");
    expect_close(dw, 1e-3, kEps, tag + " dw");
    if (c.bias) expect_close(db, 1e-3, kEps, tag + " db");
    auto dw2 = twin_out(std::size_t(c.out) * c.in), db2 = twin_out(c.out);
    gpu->dense_backward(x.gf(), w.gf(), dy.gf(), dx2.gf(), dw2.gf(), c.bias ? db2.gf() : nullptr,
                        c.n, c.in, c.out);
    gpu->relu_backward(x.gf(), dx2.gf(), dx2.gf(), nx);
    EXPECT_EQ(0, std::memcmp(host(*gpu, dx.g.as<void>(), nx).data(),
                             host(*gpu, dx2.g.as<void>(), nx).data(), nx * 4))
        << tag << ": the folded backward differs from dense_backward + relu_backward";
  }
}

TEST_F(CudaOps, ConvForwardBackward) {
  for (const ConvGeom& g : {
           conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0),   // LeNet conv1
           conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0),  // LeNet conv2
           conv_geom(3, 3, 32, 32, 16, 3, 3, 1, 1),    // same padding
           conv_geom(2, 5, 13, 11, 7, 3, 3, 2, 1),     // stride 2, odd sizes
           conv_geom(1, 4, 9, 9, 6, 1, 1, 1, 0),       // batch 1, pointwise
           conv_geom(5, 3, 17, 15, 8, 4, 2, 2, 0),     // non-square kernel, stride 2
       })
    check_conv(g);
}

// Our direct kernels (trainer/cuda/direct_conv.h) on every shape they take, forced on (the timed
// choice takes them only where they win): forward with its bias, both gradients, the weight
// gradient in one part and in several (its part sums then summed in order), and a shape they do
// not take, which must still run on cuDNN.
TEST_F(CudaOps, DirectConvolutionsMatchCpu) {
  gpu->set_direct_conv(cuda::CudaBackend::DirectConv::always);
  for (const ConvGeom& g : {
           conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0),   // LeNet conv1: many weight-gradient parts
           conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0),  // LeNet conv2: one part
           conv_geom(3, 3, 32, 32, 16, 3, 3, 1, 1),    // 3x3 same padding
           conv_geom(2, 5, 13, 11, 7, 5, 5, 1, 2),     // 5x5 same padding, odd sizes
           conv_geom(1, 9, 6, 7, 3, 3, 3, 1, 2),    // padding 2 on a 3x3 filter: the output grows
           conv_geom(4, 64, 8, 8, 13, 3, 3, 1, 0),  // many channels, a partial filter tile
           conv_geom(3, 7, 9, 11, 33, 3, 3, 1, 1),  // 297 positions, 33 filters: partial blocks
           conv_geom(2, 5, 13, 11, 7, 3, 3, 2, 1),  // stride 2: not taken, cuDNN runs it
       }) {
    EXPECT_EQ(cuda::direct_conv_fits(g), g.stride_h == 1) << "stride " << g.stride_h;
    check_conv(g);
  }
}

// The tiled kernels (trainer/cuda/tiled_conv.h: forward, backward data, and the weight gradient
// with the bias gradient) on the same shapes,
// forced on, with blocks of at most one, two and all filter groups and with the input channels
// in one slice or several (so partial filter groups, several filter blocks per image, images
// split into row blocks, rows past the image and the slices' sum are all met).
TEST_F(CudaOps, TiledConvolutionsMatchCpu) {
  gpu->set_direct_conv(cuda::CudaBackend::DirectConv::tiled);
  for (int groups : {0, 1, 2}) {
    cuda::tiled_conv_max_groups(groups);
    cuda::tiled_conv_max_split(groups == 1 ? 1 : 0);      // one slice, and the kernel's own choice
    cuda::tiled_conv_filter_images(groups == 2 ? 3 : 0);  // 3 images a block: a partial chunk
    for (const ConvGeom& g : {
             conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0),  // LeNet conv2
             conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0),   // LeNet conv1
             conv_geom(3, 3, 32, 32, 16, 3, 3, 1, 1),    // 3x3 same padding
             conv_geom(2, 5, 13, 11, 7, 5, 5, 1, 2),     // 5x5 same padding, odd sizes
             conv_geom(1, 9, 6, 7, 3, 3, 3, 1, 2),       // padding 2 on a 3x3 filter
             conv_geom(3, 7, 9, 11, 33, 3, 3, 1, 1),     // 33 filters: a partial group
             conv_geom(5, 16, 10, 9, 12, 3, 3, 1, 1),    // weight gradient, 3x3, padded
             conv_geom(4, 6, 8, 8, 10, 3, 3, 1, 1),      // 8 wide: the unrolled rows, 3x3
             conv_geom(2, 5, 13, 11, 7, 3, 3, 2, 1),     // stride 2: not taken, cuDNN runs it
         }) {
      EXPECT_EQ(cuda::tiled_conv_fits(g), g.stride_h == 1) << "stride " << g.stride_h;
      // The weight-gradient kernel takes them all (row slices fill a block when channels are few).
      EXPECT_EQ(cuda::tiled_conv_filter_fits(g, 132), g.stride_h == 1);
      SCOPED_TRACE("groups " + std::to_string(groups));
      check_conv(g);
    }
  }
  cuda::tiled_conv_max_groups(0);
  cuda::tiled_conv_max_split(0);
  cuda::tiled_conv_filter_images(0);
}

// The scatter data gradient (trainer/cuda/scatter_dgrad.h) forced on, the other ops tiled: one,
// three and the plan's images a block (a partial last block), a partial channel group (7 and 9
// channels in groups of 4), padded and unpadded 3x3 and 5x5, windows past the image's last rows and
// columns, and planned for a whole GPU and for a 64th of one.
TEST_F(CudaOps, ScatterDataGradientMatchesCpu) {
  for (int share : {1, 64})
    for (int images : {0, 1, 3}) {
      SCOPED_TRACE("share " + std::to_string(share) + ", images " + std::to_string(images));
      gpu = std::make_unique<cuda::CudaBackend>(0);
      gpu->set_gpu_share(share);
      gpu->set_direct_conv(cuda::CudaBackend::DirectConv::scatter);
      cuda::scatter_dgrad_max_images(images);
      for (const ConvGeom& g : {
               conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0),  // LeNet conv2
               conv_geom(3, 3, 32, 32, 16, 3, 3, 1, 1),    // 3x3 same padding
               conv_geom(2, 5, 13, 11, 7, 5, 5, 1, 2),     // 5x5 same padding, odd sizes
               conv_geom(1, 9, 6, 7, 3, 3, 3, 1, 2),       // padding 2 on a 3x3 filter
               conv_geom(3, 7, 9, 11, 33, 3, 3, 1, 1),     // 7 channels: a partial group
           }) {
        EXPECT_TRUE(cuda::scatter_dgrad_fits(g));
        check_conv(g);
      }
    }
  cuda::scatter_dgrad_max_images(0);
  // The windows are added in a fixed order (no atomics): the same bits every run.
  const ConvGeom g = conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w, ws = std::size_t(g.k) * g.c * 25;
  auto x = twin_random(xs), dy = twin_random(std::size_t(g.n) * g.k * 64), w = twin_random(ws);
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 3; ++run) {
    auto dx = twin_out(xs), dw = twin_out(ws);
    gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), dx.gf(), dw.gf(), nullptr);
    runs.push_back(host(*gpu, dx.g.as<void>(), xs));
  }
  for (int run = 1; run < 3; ++run)
    EXPECT_EQ(0, std::memcmp(runs[0].data(), runs[run].data(), xs * sizeof(float)))
        << "run " << run << " differs from run 0";
  const ConvGeom strided = conv_geom(2, 5, 13, 11, 7, 3, 3, 2, 1);
  EXPECT_FALSE(cuda::scatter_dgrad_fits(strided)) << "stride 2 runs on cuDNN";
  check_conv(strided);
}

// A fused array's members plan our kernels for a share of the GPU (DeviceSpec::share): other
// blocks (more filters and rows each, fewer channel slices and image chunks), the same results.
TEST_F(CudaOps, TiledConvolutionsPlannedForAShareOfTheGpuMatchCpu) {
  for (int share : {4, 64}) {
    SCOPED_TRACE("share " + std::to_string(share));
    gpu = std::make_unique<cuda::CudaBackend>(0);
    gpu->set_gpu_share(share);
    gpu->set_direct_conv(cuda::CudaBackend::DirectConv::tiled);
    check_conv(conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0));  // LeNet conv2
    check_conv(conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0));   // LeNet conv1
    check_conv(conv_geom(3, 7, 9, 11, 33, 3, 3, 1, 1));     // a partial filter group
  }
}

// Each device loads its own copy of a kernel, so the tiled and scatter kernels' shared memory
// above 48 KB must be allowed on each: a data-parallel trial's second replica once failed its
// launches with "invalid argument" because only the first GPU had been allowed. Device 0 first,
// then the others; the scatter kernel planned for a share of 8 (its blocks then take 50 KB).
TEST_F(CudaOps, TiledConvolutionsRunOnEveryDevice) {
  const int devices = cuda_device_count_impl();
  if (devices < 2) GTEST_SKIP() << "one GPU: the launches on a second device are not tested";
  for (const auto mode :
       {cuda::CudaBackend::DirectConv::tiled, cuda::CudaBackend::DirectConv::scatter})
    for (int d = 0; d < devices; ++d) {
      SCOPED_TRACE("device " + std::to_string(d));
      gpu = std::make_unique<cuda::CudaBackend>(d);
      if (mode == cuda::CudaBackend::DirectConv::scatter) gpu->set_gpu_share(8);
      gpu->set_direct_conv(mode);
      check_conv(conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0));  // LeNet conv2: over 48 KB backward
      check_conv(conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0));
    }
}

// The same inputs give the same bits every time (no atomics in the direct kernels).
TEST_F(CudaOps, DirectConvolutionsAreDeterministic) {
  gpu->set_direct_conv(cuda::CudaBackend::DirectConv::always);
  const ConvGeom g = conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w, ws = std::size_t(g.k) * 25;
  const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  auto x = twin_random(xs), dy = twin_random(ys), w = twin_random(ws);
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 3; ++run) {
    auto dw = twin_out(ws), db = twin_out(g.k);
    gpu->conv2d_backward(g, x.gf(), w.gf(), dy.gf(), nullptr, dw.gf(), db.gf());
    std::vector<float> bits = host(*gpu, dw.g.as<void>(), ws);
    const std::vector<float> bias = host(*gpu, db.g.as<void>(), g.k);
    bits.insert(bits.end(), bias.begin(), bias.end());
    runs.push_back(std::move(bits));
  }
  for (int run = 1; run < 3; ++run)
    EXPECT_EQ(0, std::memcmp(runs[0].data(), runs[run].data(), runs[0].size() * sizeof(float)))
        << "run " << run << " differs from run 0";
}

// A plan times its algorithms (cudnnFind) only when asked: the shapes of partial batches take
// the heuristics' choice, which costs no device time, and still compute the same convolution.
TEST_F(CudaOps, ConvPlanTimesAlgorithmsOnlyWhenAsked) {
  const ConvGeom g = conv_geom(16, 20, 12, 12, 50, 5, 5, 1, 0);
  cuda::CudnnHandle h = cuda::make_cudnn();
  const cuda::ConvPlan timed(h.get(), g, cuda::MathMode::fp32, std::size_t{256} << 20,
                             cuda::ConvPlan::Choose::timed);
  const cuda::ConvPlan untimed(h.get(), g, cuda::MathMode::fp32, std::size_t{256} << 20,
                               cuda::ConvPlan::Choose::untimed);
  EXPECT_TRUE(std::isfinite(timed.measured_ms()));
  EXPECT_GT(timed.measured_ms(), 0.f);
  EXPECT_TRUE(std::isinf(untimed.measured_ms()));
  // Through the backend: batch 16 is not the tuned batch, and the result is still right.
  gpu->tune_for_batch(64);
  const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w, ws = std::size_t(g.k) * g.c * 25;
  auto x = twin_random(xs), w = twin_random(ws);
  auto y = twin_out(std::size_t(g.n) * g.k * g.out_h * g.out_w);
  cpu->conv2d_forward(g, x.cf(), w.cf(), nullptr, y.cf());
  gpu->conv2d_forward(g, x.gf(), w.gf(), nullptr, y.gf());
  expect_close(y, 1e-3, kEps, "conv with an untimed plan");
}

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
  // Planned for a whole H200 (132 SMs) both layers pool; for a 16th of it (a fused array's member)
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
TEST_F(CudaOps, DeterministicConvolutionsGiveTheSameBitsAtEveryShare) {
  const auto bits = [&](cuda::CudaBackend& b, const ConvGeom& g, const Twin& x, const Twin& w,
                        const Twin& bias, const Twin& dy) {
    const std::size_t xs = std::size_t(g.n) * g.c * g.h * g.w;
    const std::size_t ws = std::size_t(g.k) * g.c * g.r * g.s;
    const std::size_t ys = std::size_t(g.n) * g.k * g.out_h * g.out_w;
    const PoolGeom pg = maxpool2x2_of(g);
    const std::size_t ps = std::size_t(pg.n) * pg.c * pg.out_h * pg.out_w;
    DeviceBuffer y(b, ys * 4), dx(b, xs * 4), dw(b, ws * 4), db(b, g.k * 4), y2(b, ys * 4),
        pooled(b, ps * 4), argmax(b, ps);
    b.conv2d_forward(g, x.gf(), w.gf(), bias.gf(), y.f());
    b.conv2d_backward(g, x.gf(), w.gf(), dy.gf(), dx.f(), dw.f(), db.f());
    b.conv2d_forward_maxpool2x2(g, x.gf(), w.gf(), bias.gf(), y2.f(), pooled.f(),
                                argmax.as<std::uint8_t>());
    std::vector<float> out;
    using Part = std::pair<const DeviceBuffer*, std::size_t>;
    for (const auto& [p, n] : std::initializer_list<Part>{
             {&y, ys}, {&dx, xs}, {&dw, ws}, {&db, std::size_t(g.k)}, {&pooled, ps}}) {
      const std::vector<float> v = host(b, p->as<void>(), n);
      out.insert(out.end(), v.begin(), v.end());
    }
    return out;
  };
  // Blocks cut for the share where the order allows: LeNet's second layer slices its forward's
  // channels and its scatter's filters alike planned for 8 or 33 SMs (one slice), not for 132.
  const ConvGeom lenet2 = conv_geom(64, 20, 12, 12, 50, 5, 5, 1, 0);
  EXPECT_EQ(cuda::tiled_conv_forward_sms(lenet2, 8, 33), 8);
  EXPECT_EQ(cuda::tiled_conv_forward_sms(lenet2, 132, 33), 33);
  EXPECT_EQ(cuda::scatter_dgrad_sms(lenet2, 8, 33), 8);
  EXPECT_EQ(cuda::scatter_dgrad_sms(lenet2, 132, 33), 33);
  for (const ConvGeom& g : {lenet2, conv_geom(64, 1, 28, 28, 20, 5, 5, 1, 0) /* LeNet conv1 */,
                            conv_geom(32, 20, 12, 12, 50, 5, 5, 1, 0) /* a partial batch */,
                            conv_geom(3, 4, 12, 10, 8, 3, 3, 1, 1) /* 3x3, padded */}) {
    const std::string tag = "c" + std::to_string(g.c) + " k" + std::to_string(g.k) + " n" +
                            std::to_string(g.n) + " r" + std::to_string(g.r);
    const Twin x = twin_random(std::size_t(g.n) * g.c * g.h * g.w),
               w = twin_random(std::size_t(g.k) * g.c * g.r * g.s), bias = twin_random(g.k),
               dy = twin_random(std::size_t(g.n) * g.k * g.out_h * g.out_w);
    cuda::CudaBackend quarter(0);
    quarter.set_gpu_share(cuda::CudaBackend::kDeterministicShare);
    quarter.set_direct_conv(cuda::CudaBackend::DirectConv::scatter);  // scatter data gradient
    const std::vector<float> want = bits(quarter, g, x, w, bias, dy);
    for (int share : {1, 2, 8, 16, 64}) {
      cuda::CudaBackend det(0, cuda::MathMode::fp32, /*deterministic=*/true);
      det.set_gpu_share(share);
      const std::vector<float> got = bits(det, g, x, w, bias, dy);
      ASSERT_EQ(got.size(), want.size()) << tag;
      EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
          << tag << " share " << share;
    }
  }
}

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

TEST_F(CudaOps, BatchNormTrainInferBackward) {
  struct Case {
    int n, c, hw;
  };
  // Channels split into several chunks (one block each; the last one short) and into one.
  for (const Case k : {Case{64, 16, 64}, Case{3, 5, 7 * 9}, Case{32, 100, 1}, Case{128, 32, 256},
                       Case{37, 8, 300}}) {
    const BatchNormGeom g{k.n, k.c, k.hw, 1e-5f, 0.1f};
    const std::string tag = "batchnorm n" + std::to_string(k.n) + " c" + std::to_string(k.c) +
                            " hw" + std::to_string(k.hw);
    const std::size_t xs = std::size_t(k.n) * k.c * k.hw;
    auto x = twin_random(xs, -2.f, 3.f), gamma = twin_random(k.c, 0.5f, 1.5f);
    auto beta = twin_random(k.c), rmean = twin_random(k.c), rvar = twin_random(k.c, 0.5f, 2.f);
    auto smean = twin_out(k.c), sinv = twin_out(k.c), y = twin_out(xs);
    cpu->batchnorm_forward_train(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                 smean.cf(), sinv.cf(), y.cf());
    gpu->batchnorm_forward_train(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                 smean.gf(), sinv.gf(), y.gf());
    expect_close(y, 1e-4, 1e-4, tag + " y");
    expect_close(smean, 1e-5, 1e-5, tag + " save_mean");
    expect_close(sinv, 1e-5, 1e-4, tag + " save_invstd");
    expect_close(rmean, 1e-5, 1e-5, tag + " running_mean");
    expect_close(rvar, 1e-5, 1e-4, tag + " running_var (unbiased)");
    auto yi = twin_out(xs);
    cpu->batchnorm_forward_infer(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(), yi.cf());
    gpu->batchnorm_forward_infer(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(), yi.gf());
    expect_close(yi, 1e-4, 1e-4, tag + " y (inference)");
    auto dy = twin_random(xs), dx = twin_out(xs), dg = twin_out(k.c), db = twin_out(k.c);
    cpu->batchnorm_backward(g, x.cf(), dy.cf(), gamma.cf(), smean.cf(), sinv.cf(), dx.cf(), dg.cf(),
                            db.cf());
    gpu->batchnorm_backward(g, x.gf(), dy.gf(), gamma.gf(), smean.gf(), sinv.gf(), dx.gf(), dg.gf(),
                            db.gf());
    expect_close(dx, 1e-4, 1e-3, tag + " dx");
    expect_close(dg, 1e-3, 1e-4, tag + " dgamma");
    expect_close(db, 1e-3, 1e-4, tag + " dbeta");
    // With a ReLU folded in: the CPU composes the two ops (Backend's defaults), CUDA runs one pass.
    auto yr = twin_out(xs), yri = twin_out(xs);
    cpu->batchnorm_forward_train_relu(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                      smean.cf(), sinv.cf(), yr.cf());
    gpu->batchnorm_forward_train_relu(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                      smean.gf(), sinv.gf(), yr.gf());
    expect_close(yr, 1e-4, 1e-4, tag + " relu y");
    cpu->batchnorm_forward_infer_relu(g, x.cf(), gamma.cf(), beta.cf(), rmean.cf(), rvar.cf(),
                                      yri.cf());
    gpu->batchnorm_forward_infer_relu(g, x.gf(), gamma.gf(), beta.gf(), rmean.gf(), rvar.gf(),
                                      yri.gf());
    expect_close(yri, 1e-4, 1e-4, tag + " relu y (inference)");
    // The CPU's y as both sides' ReLU output, so the masks agree exactly.
    auto yc = twin(host(*cpu, yr.c.as<void>(), xs)), dxr = twin_out(xs);
    auto dgr = twin_out(k.c), dbr = twin_out(k.c);
    cpu->batchnorm_backward_relu(g, x.cf(), yc.cf(), dy.cf(), gamma.cf(), smean.cf(), sinv.cf(),
                                 dxr.cf(), dgr.cf(), dbr.cf());
    gpu->batchnorm_backward_relu(g, x.gf(), yc.gf(), dy.gf(), gamma.gf(), smean.gf(), sinv.gf(),
                                 dxr.gf(), dgr.gf(), dbr.gf());
    expect_close(dxr, 1e-4, 1e-3, tag + " relu dx");
    expect_close(dgr, 1e-3, 1e-4, tag + " relu dgamma");
    expect_close(dbr, 1e-3, 1e-4, tag + " relu dbeta");
  }
}

TEST_F(CudaOps, SoftmaxCrossEntropyAndArgmax) {
  struct Case {
    int n, classes;
  };
  for (const Case k : {Case{64, 10}, Case{1, 3}, Case{257, 100}, Case{1000, 10}, Case{5, 37}}) {
    const std::string tag = "xent n" + std::to_string(k.n) + " classes" + std::to_string(k.classes);
    const std::size_t ls = std::size_t(k.n) * k.classes;
    auto logits = twin_random(ls, -6.f, 6.f), dl = twin_out(ls);
    std::vector<std::int32_t> labels(k.n);
    std::uniform_int_distribution<int> pick(0, k.classes - 1);
    for (auto& l : labels) l = pick(rng);
    DeviceBuffer lc(*cpu, k.n * 4), lg(*gpu, k.n * 4);
    cpu->copy_to_device(lc.as<void>(), labels.data(), k.n * 4);
    gpu->copy_to_device(lg.as<void>(), labels.data(), k.n * 4);
    const double start[2] = {1.5, 2.0};  // stats are ADDED to
    DeviceBuffer sc(*cpu, 16), sg(*gpu, 16);
    cpu->copy_to_device(sc.as<void>(), start, 16);
    gpu->copy_to_device(sg.as<void>(), start, 16);
    cpu->softmax_cross_entropy(logits.cf(), lc.as<std::int32_t>(), k.n, k.classes, dl.cf(),
                               sc.as<double>());
    gpu->softmax_cross_entropy(logits.gf(), lg.as<std::int32_t>(), k.n, k.classes, dl.gf(),
                               sg.as<double>());
    expect_close(dl, 1e-7, 1e-5, tag + " dlogits");
    const auto stc = host<double>(*cpu, sc.as<void>(), 2),
               stg = host<double>(*gpu, sg.as<void>(), 2);
    EXPECT_NEAR(stg[0], stc[0], 1e-9 * k.n + 1e-12 * std::fabs(stc[0])) << tag << " loss sum";
    EXPECT_EQ(stg[1], stc[1]) << tag << " correct count";
    // Without dlogits only the stats change.
    gpu->softmax_cross_entropy(logits.gf(), lg.as<std::int32_t>(), k.n, k.classes, nullptr,
                               sg.as<double>());
    const auto stg2 = host<double>(*gpu, sg.as<void>(), 2);
    EXPECT_NEAR(stg2[0] - stg[0], stc[0] - start[0], 1e-6 * k.n) << tag << " second add";
    DeviceBuffer pc(*cpu, k.n * 4), pg(*gpu, k.n * 4);
    cpu->argmax(logits.cf(), k.n, k.classes, pc.as<std::int32_t>());
    gpu->argmax(logits.gf(), k.n, k.classes, pg.as<std::int32_t>());
    EXPECT_EQ(host<std::int32_t>(*cpu, pc.as<void>(), k.n),
              host<std::int32_t>(*gpu, pg.as<void>(), k.n))
        << tag << " argmax";
  }
}

TEST_F(CudaOps, ArgmaxTakesFirstMaximumOnTies) {
  const std::vector<float> logits = {1, 3, 3, 0, /**/ 2, 2, 2, 2, /**/ -1, -5, -1, -1};
  auto l = twin(logits);
  DeviceBuffer pg(*gpu, 12);
  gpu->argmax(l.gf(), 3, 4, pg.as<std::int32_t>());
  EXPECT_EQ(host<std::int32_t>(*gpu, pg.as<void>(), 3), (std::vector<std::int32_t>{1, 0, 0}));
}

TEST_F(CudaOps, SumSquaresAndClipScale) {
  for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{431080}}) {
    auto x = twin_random(n);
    const double start = 0.75;
    DeviceBuffer sc(*cpu, 8), sg(*gpu, 8);
    cpu->copy_to_device(sc.as<void>(), &start, 8);
    gpu->copy_to_device(sg.as<void>(), &start, 8);
    cpu->sum_squares(x.cf(), n, sc.as<double>());
    gpu->sum_squares(x.gf(), n, sg.as<double>());
    const double c = host<double>(*cpu, sc.as<void>(), 1)[0],
                 g = host<double>(*gpu, sg.as<void>(), 1)[0];
    EXPECT_NEAR(g, c, 1e-9 * c) << "sum_squares n=" << n;
    for (float max_norm : {0.1f, 1e6f}) {
      DeviceBuffer fc(*cpu, 4), fg(*gpu, 4);
      cpu->clip_scale(sc.as<double>(), max_norm, fc.f());
      gpu->clip_scale(sg.as<double>(), max_norm, fg.f());
      EXPECT_NEAR(host(*gpu, fg.as<void>(), 1)[0], host(*cpu, fc.as<void>(), 1)[0], 1e-6)
          << "clip_scale max_norm=" << max_norm;
    }
  }
}

TEST_F(CudaOps, OptimizerStepAllKinds) {
  const std::size_t n = 100001;
  for (OptimizerKind kind : {OptimizerKind::sgdm, OptimizerKind::adam, OptimizerKind::rmsprop}) {
    for (bool nesterov : {false, true}) {
      for (bool scaled : {false, true}) {
        if (nesterov && kind != OptimizerKind::sgdm) continue;
        OptimizerStep s;
        s.kind = kind;
        s.lr = 0.03f;
        s.nesterov = nesterov;
        s.weight_decay = 5e-4f;
        s.t = 3;
        const std::string tag = std::string("optimizer kind ") + std::to_string(int(kind)) +
                                (nesterov ? " nesterov" : "") + (scaled ? " scaled" : "");
        auto p = twin_random(n), g = twin_random(n), s1 = twin_random(n, 0.f, 0.1f);
        auto s2 = twin_random(n, 0.f, 0.01f), gs = twin(std::vector<float>{0.5f});
        // The GPU updates 16-byte aligned arrays four parameters a thread (the last n % 4 alone),
        // others one a thread: the first 50001 (aligned, one left over), then the rest from an
        // unaligned start, both against the CPU's one call.
        const std::size_t half = n / 2 + 1;
        for (int step = 0; step < 3; ++step, ++s.t) {
          cpu->optimizer_step(s, p.cf(), g.cf(), s1.cf(), s2.cf(), n, scaled ? gs.cf() : nullptr);
          gpu->optimizer_step(s, p.gf(), g.gf(), s1.gf(), s2.gf(), half,
                              scaled ? gs.gf() : nullptr);
          gpu->optimizer_step(s, p.gf() + half, g.gf() + half, s1.gf() + half, s2.gf() + half,
                              n - half, scaled ? gs.gf() : nullptr);
        }
        expect_close(p, 1e-6, 1e-5, tag + " params");
        expect_close(s1, 1e-6, 1e-5, tag + " state1");
        if (kind == OptimizerKind::adam) expect_close(s2, 1e-7, 1e-5, tag + " state2");
      }
    }
  }
}

TEST_F(CudaOps, GatherBatchMatchesCpuBitForBit) {
  struct Case {
    int n, c, h, w, batch;
    bool flip;
    int shift;
  };
  for (const Case k : {Case{500, 1, 28, 28, 64, false, 0}, Case{500, 1, 28, 28, 64, true, 2},
                       Case{300, 3, 32, 32, 33, true, 4}, Case{50, 2, 5, 7, 1, true, 3}}) {
    const std::string tag = "gather c" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" +
                            std::to_string(k.w) + " flip" + std::to_string(k.flip) + " shift" +
                            std::to_string(k.shift);
    const std::size_t sample = std::size_t(k.c) * k.h * k.w;
    std::vector<std::uint8_t> images(sample * k.n), labels(k.n);
    std::uniform_int_distribution<int> byte(0, 255), cls(0, 9), row(0, k.n - 1);
    for (auto& v : images) v = static_cast<std::uint8_t>(byte(rng));
    for (auto& v : labels) v = static_cast<std::uint8_t>(cls(rng));
    std::vector<std::int32_t> indices(k.batch);
    for (auto& v : indices) v = row(rng);
    auto put = [](Backend& b, DeviceBuffer& buf, const void* src, std::size_t bytes) {
      buf = DeviceBuffer(b, bytes);
      b.copy_to_device(buf.as<void>(), src, bytes);
    };
    DeviceBuffer ic, ig, lc, lg, xc, xg;
    put(*cpu, ic, images.data(), images.size());
    put(*gpu, ig, images.data(), images.size());
    put(*cpu, lc, labels.data(), labels.size());
    put(*gpu, lg, labels.data(), labels.size());
    put(*cpu, xc, indices.data(), indices.size() * 4);
    put(*gpu, xg, indices.data(), indices.size() * 4);
    GatherDesc d{};
    d.batch = k.batch;
    d.c = k.c;
    d.h = k.h;
    d.w = k.w;
    std::vector<float> factors;  // per channel: scale (u8 / (255 std)), then shift (-mean / std)
    for (int c = 0; c < k.c; ++c) factors.push_back(1.f / (255.f * (0.3f + 0.05f * c)));
    for (int c = 0; c < k.c; ++c) factors.push_back(-(0.2f + 0.1f * c) / (0.3f + 0.05f * c));
    DeviceBuffer fc, fg;
    put(*cpu, fc, factors.data(), factors.size() * 4);
    put(*gpu, fg, factors.data(), factors.size() * 4);
    d.flip = k.flip;
    d.max_shift = k.shift;
    d.seed = 42;
    d.step = 7;
    auto out = twin_out(sample * k.batch);
    DeviceBuffer yc(*cpu, k.batch * 4), yg(*gpu, k.batch * 4);
    d.images = ic.as<std::uint8_t>();
    d.labels = lc.as<std::uint8_t>();
    d.indices = xc.as<std::int32_t>();
    d.scale = fc.f();
    d.shift = fc.f() + k.c;
    cpu->gather_batch(d, out.cf(), yc.as<std::int32_t>());
    d.images = ig.as<std::uint8_t>();
    d.labels = lg.as<std::uint8_t>();
    d.indices = xg.as<std::int32_t>();
    d.scale = fg.f();
    d.shift = fg.f() + k.c;
    gpu->gather_batch(d, out.gf(), yg.as<std::int32_t>());
    const auto oc = host(*cpu, out.c.as<void>(), out.n), og = host(*gpu, out.g.as<void>(), out.n);
    EXPECT_EQ(0, std::memcmp(oc.data(), og.data(), out.n * 4)) << tag << " images";
    EXPECT_EQ(host<std::int32_t>(*cpu, yc.as<void>(), k.batch),
              host<std::int32_t>(*gpu, yg.as<void>(), k.batch))
        << tag << " labels";
  }
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
