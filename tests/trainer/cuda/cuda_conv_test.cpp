/*
 * cuda_conv_test.cpp — the CUDA backend's convolutions (cuda_conv.cu and the plan chooser): cuDNN's
 * plans, our direct, tiled and scatter kernels, planned for a share of the GPU, deterministic mode,
 * against the CPU backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include <cstring>
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/tiled_conv.h"

namespace sweep::trainer::test {
namespace {

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
    // Appended, not prefixed: GCC 12 warns (falsely) on "c" + std::to_string(...) inlined here.
    std::string tag = "c";
    tag += std::to_string(g.c) + " k" + std::to_string(g.k) + " n" + std::to_string(g.n) + " r" +
           std::to_string(g.r);
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

}  // namespace
}  // namespace sweep::trainer::test
