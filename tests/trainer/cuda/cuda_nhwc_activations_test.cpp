/*
 * cuda_nhwc_activations_test.cpp — the CUDA backend's ops on activations kept channels-last
 * (backend.h, "activations kept channels-last"), bf16 NHWC in bf16 mode and fp32 NHWC in tf32
 * mode, against the reference every backend has: convert to fp32 NCHW, the CPU's fp32 op,
 * convert back (trainer/backend/nhwc_reference.h). Both sides read the same stored bits.
 *
 * Ops whose result is one rounding of an exactly computed value (ReLU, sums, max pooling) must
 * give the same bits; batch norm and average pooling sum in another order, so their bf16 outputs
 * may differ by one rounding step (2^-8 relative) and their fp32 outputs by float error. The
 * convolutions run bf16 or tf32 products on the GPU against fp32 ones on the same inputs on the
 * CPU.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/layer.h"
#include "trainer/models.h"
#include "trainer/network.h"

namespace sweep::trainer::test {
namespace {

// Each test in both channels-last storages: bf16 NHWC (bf16 mode) and fp32 NHWC (tf32 mode).
class CudaNhwcActivations : public CudaVsCpu, public testing::WithParamInterface<Storage> {
 protected:
  void SetUp() override {
    CudaVsCpu::SetUp();
    if (IsSkipped()) return;
    gpu = std::make_unique<cuda::CudaBackend>(
        0, is_bf16(S) ? cuda::MathMode::bf16 : cuda::MathMode::tf32);
    auto ref = std::make_unique<CpuBackend>(0);
    ref->set_nhwc_storage(S);
    cpu = std::move(ref);
    ASSERT_EQ(gpu->nhwc_storage(), S);
  }

  const Storage S = GetParam();
  const std::size_t bytes = storage_bytes(S, 1);  // of one stored value
  // One rounding step of the stored type, relative.
  const double step = is_bf16(S) ? 1.0 / 128 : 1e-6;

  // A tensor of n images, c channels, hw pixels stored as S, the same bits on both backends.
  struct Stored {
    DeviceBuffer c, g;
    int n = 0, ch = 0, hw = 0;
    void* cp() const { return c.as<void>(); }
    void* gp() const { return g.as<void>(); }
    std::size_t size() const { return std::size_t(n) * ch * hw; }
  };
  Stored stored_twin(int n, int c, int hw, float lo = -1.f, float hi = 1.f) {
    const std::vector<float> v = random(std::size_t(n) * c * hw, lo, hi);
    Stored t{DeviceBuffer(*cpu, v.size() * bytes), DeviceBuffer(*gpu, v.size() * bytes), n, c, hw};
    cpu->to_storage(S, v.data(), t.cp(), n, c, hw);
    const auto raw = host<std::uint8_t>(*cpu, t.cp(), v.size() * bytes);
    gpu->copy_to_device(t.gp(), raw.data(), raw.size());
    return t;
  }
  // An output, poisoned with NaN's bits (all ones) on both.
  Stored stored_out(int n, int c, int hw) {
    const std::size_t size = std::size_t(n) * c * hw * bytes;
    Stored t{DeviceBuffer(*cpu, size), DeviceBuffer(*gpu, size), n, c, hw};
    const std::vector<std::uint8_t> nan(size, 0xff);
    cpu->copy_to_device(t.cp(), nan.data(), size);
    gpu->copy_to_device(t.gp(), nan.data(), size);
    return t;
  }
  // The tensor as fp32 NCHW, read through each backend's own conversion.
  std::vector<float> widened(Backend& b, const void* p, const Stored& t) {
    DeviceBuffer f(b, t.size() * 4);
    channels_last(b).from_storage(S, p, f.f(), t.n, t.ch, t.hw);
    return host(b, f.as<void>(), t.size());
  }
  void expect_same_bits(const Stored& t, const std::string& what) {
    EXPECT_EQ(host<std::uint8_t>(*cpu, t.cp(), t.size() * bytes),
              host<std::uint8_t>(*gpu, t.gp(), t.size() * bytes))
        << what;
  }
  // Within one rounding step of the stored type (relative) plus tol.
  void expect_stored_near(const Stored& t, double tol, const std::string& what) {
    expect_close(widened(*cpu, t.cp(), t), widened(*gpu, t.gp(), t), tol, step, what);
  }

  // Batch norm's training forward on both backends, x drawn from [lo, hi]: its inputs and outputs.
  struct BatchNormRun {
    Stored x, y;
    Twin gamma, beta, mean, var, save_mean, save_invstd;
  };
  BatchNormRun batchnorm_train(const BatchNormGeom& g, float lo, float hi, bool relu) {
    const std::size_t c = std::size_t(g.c);
    BatchNormRun r{stored_twin(g.n, g.c, g.hw, lo, hi),
                   stored_out(g.n, g.c, g.hw),
                   twin_random(c, 0.5f, 1.5f),
                   twin_random(c),
                   twin_random(c),
                   twin_random(c, 0.5f, 2.f),
                   twin_out(c),
                   twin_out(c)};
    cpu->batchnorm_forward_train_nhwc(g, S, r.x.cp(), r.gamma.cf(), r.beta.cf(), r.mean.cf(),
                                      r.var.cf(), r.save_mean.cf(), r.save_invstd.cf(), r.y.cp(),
                                      relu);
    gpu->batchnorm_forward_train_nhwc(g, S, r.x.gp(), r.gamma.gf(), r.beta.gf(), r.mean.gf(),
                                      r.var.gf(), r.save_mean.gf(), r.save_invstd.gf(), r.y.gp(),
                                      relu);
    return r;
  }
};

struct Shape4 {
  int n, c, h, w;
};
// Channels in multiples of 8 (the conv-block net and ResNets) and odd ones (every index path).
const Shape4 kShapes[] = {{16, 32, 16, 16}, {8, 64, 8, 8}, {4, 24, 7, 5}, {3, 5, 3, 3}};

std::string tag(const Shape4& s) {
  return std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" +
         std::to_string(s.w);
}

TEST_P(CudaNhwcActivations, ConversionsGiveTheReferenceBits) {
  for (const Shape4& s : kShapes) {
    const std::size_t n = std::size_t(s.n) * s.c * s.h * s.w;
    auto x = twin_random(n, -3.f, 3.f);
    Stored y = stored_out(s.n, s.c, s.h * s.w);
    cpu->to_storage(S, x.cf(), y.cp(), s.n, s.c, s.h * s.w);
    gpu->to_storage(S, x.gf(), y.gp(), s.n, s.c, s.h * s.w);
    expect_same_bits(y, "to channels-last " + tag(s));
    EXPECT_EQ(widened(*cpu, y.cp(), y), widened(*gpu, y.gp(), y)) << "to NCHW " << tag(s);
  }
}

TEST_P(CudaNhwcActivations, ElementwiseOpsGiveTheReferenceBits) {
  const int n = 1000003;  // not a multiple of any vector width
  auto a = stored_twin(1, 1, n, -2.f, 2.f), b = stored_twin(1, 1, n, -2.f, 2.f);
  for (bool relu : {false, true}) {
    auto y = stored_out(1, 1, n);
    cpu->add_nhwc(S, a.cp(), b.cp(), y.cp(), n, relu);
    gpu->add_nhwc(S, a.gp(), b.gp(), y.gp(), n, relu);
    expect_same_bits(y, relu ? "add_relu" : "add");
  }
  auto y = stored_out(1, 1, n), dx = stored_out(1, 1, n);
  cpu->relu_forward_nhwc(S, a.cp(), y.cp(), n);
  gpu->relu_forward_nhwc(S, a.gp(), y.gp(), n);
  expect_same_bits(y, "relu forward");
  cpu->relu_backward_nhwc(S, y.cp(), b.cp(), dx.cp(), n);
  gpu->relu_backward_nhwc(S, y.gp(), b.gp(), dx.gp(), n);
  expect_same_bits(dx, "relu backward");
  gpu->add_nhwc(S, a.gp(), b.gp(), a.gp(), n, false);  // in place
  cpu->add_nhwc(S, a.cp(), b.cp(), a.cp(), n, false);
  expect_same_bits(a, "add in place");
}

TEST_P(CudaNhwcActivations, MaxPoolGivesTheReferenceBits) {
  for (const Shape4& s : kShapes) {
    const PoolGeom g{s.n, s.c, s.h, s.w, 2, 2, 2, 2, 0, 0, s.h / 2, s.w / 2};
    const int ohw = g.out_h * g.out_w;
    auto x = stored_twin(s.n, s.c, s.h * s.w);
    auto y = stored_out(s.n, s.c, ohw), dy = stored_twin(s.n, s.c, ohw),
         dx = stored_out(s.n, s.c, s.h * s.w);
    cpu->maxpool2x2_forward_nhwc(g, S, x.cp(), y.cp());
    gpu->maxpool2x2_forward_nhwc(g, S, x.gp(), y.gp());
    expect_same_bits(y, "max pool " + tag(s));
    cpu->maxpool2x2_backward_nhwc(g, S, x.cp(), y.cp(), dy.cp(), dx.cp());
    gpu->maxpool2x2_backward_nhwc(g, S, x.gp(), y.gp(), dy.gp(), dx.gp());
    expect_same_bits(dx, "max pool backward " + tag(s));
  }
  // Ties go to the first maximum of the window, as in fp32.
  const PoolGeom g{2, 8, 4, 4, 2, 2, 2, 2, 0, 0, 2, 2};
  Stored x = stored_out(2, 8, 16), y = stored_out(2, 8, 4), dx = stored_out(2, 8, 16);
  auto dy = stored_twin(2, 8, 4);
  const std::vector<float> ones(x.size(), 1.f);
  cpu->to_storage(S, ones.data(), x.cp(), 2, 8, 16);
  const auto raw = host<std::uint8_t>(*cpu, x.cp(), x.size() * bytes);
  gpu->copy_to_device(x.gp(), raw.data(), raw.size());
  cpu->maxpool2x2_forward_nhwc(g, S, x.cp(), y.cp());
  gpu->maxpool2x2_forward_nhwc(g, S, x.gp(), y.gp());
  cpu->maxpool2x2_backward_nhwc(g, S, x.cp(), y.cp(), dy.cp(), dx.cp());
  gpu->maxpool2x2_backward_nhwc(g, S, x.gp(), y.gp(), dy.gp(), dx.gp());
  expect_same_bits(dx, "max pool backward, ties");
}

TEST_P(CudaNhwcActivations, GlobalAveragePoolMatchesTheReference) {
  for (const Shape4& s : kShapes) {
    const PoolGeom g{s.n, s.c, s.h, s.w, s.h, s.w, s.h, s.w, 0, 0, 1, 1};
    auto x = stored_twin(s.n, s.c, s.h * s.w);
    auto y = twin_out(std::size_t(s.n) * s.c), dy = twin_random(std::size_t(s.n) * s.c);
    auto dx = stored_out(s.n, s.c, s.h * s.w);
    cpu->global_avgpool_forward_nhwc(g, S, x.cp(), y.cf());
    gpu->global_avgpool_forward_nhwc(g, S, x.gp(), y.gf());
    expect_close(y, 1e-6, 1e-5, "global average " + tag(s));
    cpu->global_avgpool_backward_nhwc(g, S, dy.cf(), dx.cp());
    gpu->global_avgpool_backward_nhwc(g, S, dy.gf(), dx.gp());
    expect_stored_near(dx, 0, "global average backward " + tag(s));
  }
}

TEST_P(CudaNhwcActivations, BatchNormMatchesTheReference) {
  for (const Shape4& s : kShapes) {
    for (bool relu : {false, true}) {
      const std::string what = "batch norm " + tag(s) + (relu ? " + relu" : "");
      const BatchNormGeom g{s.n, s.c, s.h * s.w, 1e-5f, 0.1f};
      const std::size_t c = std::size_t(s.c);
      auto [x, y, gamma, beta, mean, var, save_mean, save_invstd] =
          batchnorm_train(g, -2.f, 3.f, relu);
      expect_stored_near(y, 1e-3, what + " y");
      expect_close(save_mean, 1e-5, 1e-4, what + " mean");
      expect_close(save_invstd, 1e-5, 1e-4, what + " invstd");
      expect_close(mean, 1e-5, 1e-4, what + " running mean");
      expect_close(var, 1e-5, 1e-4, what + " running variance");

      auto dy = stored_twin(s.n, s.c, s.h * s.w), dx = stored_out(s.n, s.c, s.h * s.w);
      auto dgamma = twin_out(c), dbeta = twin_out(c);
      const void* ry_c = relu ? y.cp() : nullptr;
      const void* ry_g = relu ? y.gp() : nullptr;
      cpu->batchnorm_backward_nhwc(g, S, x.cp(), ry_c, dy.cp(), gamma.cf(), save_mean.cf(),
                                   save_invstd.cf(), dx.cp(), dgamma.cf(), dbeta.cf());
      // The GPU from the CPU's saved statistics and output: only the backward's own error.
      auto cpu_y = host<std::uint8_t>(*cpu, y.cp(), y.size() * bytes);
      gpu->copy_to_device(y.gp(), cpu_y.data(), cpu_y.size());
      auto cm = host(*cpu, save_mean.c.as<void>(), c), ci = host(*cpu, save_invstd.c.as<void>(), c);
      gpu->copy_to_device(save_mean.gf(), cm.data(), c * 4);
      gpu->copy_to_device(save_invstd.gf(), ci.data(), c * 4);
      gpu->batchnorm_backward_nhwc(g, S, x.gp(), ry_g, dy.gp(), gamma.gf(), save_mean.gf(),
                                   save_invstd.gf(), dx.gp(), dgamma.gf(), dbeta.gf());
      expect_stored_near(dx, 2e-3, what + " dx");
      expect_close(dgamma, 1e-4, 1e-4, what + " dgamma");
      expect_close(dbeta, 1e-4, 1e-4, what + " dbeta");
      // In place (dx = dy), as the network runs a folded ReLU's batch norm.
      gpu->batchnorm_backward_nhwc(g, S, x.gp(), ry_g, dy.gp(), gamma.gf(), save_mean.gf(),
                                   save_invstd.gf(), dy.gp(), dgamma.gf(), dbeta.gf());
      EXPECT_EQ(host<std::uint8_t>(*gpu, dy.gp(), dy.size() * bytes),
                host<std::uint8_t>(*gpu, dx.gp(), dx.size() * bytes))
          << what << " in place";

      auto yi = stored_out(s.n, s.c, s.h * s.w);
      cpu->batchnorm_forward_infer_nhwc(g, S, x.cp(), gamma.cf(), beta.cf(), mean.cf(), var.cf(),
                                        yi.cp(), relu);
      gpu->batchnorm_forward_infer_nhwc(g, S, x.gp(), gamma.gf(), beta.gf(), mean.gf(), var.gf(),
                                        yi.gp(), relu);
      expect_stored_near(yi, 1e-3, what + " inference");
    }
  }
}

// The statistics come from one pass of sums shifted by each channel's first value: a channel far
// from zero (mean about 1000, spread 1) keeps its variance (unshifted sums of squares would lose
// every digit of it in float).
TEST_P(CudaNhwcActivations, BatchNormStatisticsOfChannelsFarFromZero) {
  if (is_bf16(S)) GTEST_SKIP() << "bf16 holds 1000 +- 1 as 996, 1000 or 1004: fp32 storage only";
  const Shape4 s = kShapes[0];
  const BatchNormRun r =
      batchnorm_train(BatchNormGeom{s.n, s.c, s.h * s.w, 1e-5f, 0.1f}, 999.f, 1001.f, false);
  expect_close(r.save_mean, 1e-5, 1e-6, "far from zero: mean");
  expect_close(r.save_invstd, 1e-5, 1e-4, "far from zero: invstd");
  expect_close(r.var, 1e-5, 1e-4, "far from zero: running variance");
  expect_stored_near(r.y, 1e-3, "far from zero: y");
}

ConvGeom conv_geom(int n, int c, int hw, int k, int stride) {
  ConvGeom g{};
  g.n = n;
  g.c = c;
  g.h = g.w = hw;
  g.k = k;
  g.r = g.s = 3;
  g.stride_h = g.stride_w = stride;
  g.pad_h = g.pad_w = 1;
  g.out_h = g.out_w = (hw + 2 - 3) / stride + 1;
  return g;
}

// Every pairing of input and output storage, with and without a bias, with and without the
// operands kept from forward to backward, on the shape's channels-last plan and (a batch the
// backend was not tuned for) on the legacy tf32 plan with conversions around it. The CPU's fp32
// products on the same inputs are the reference (the GPU also rounds the weights: a few 1e-3 of
// the largest in bf16).
TEST_P(CudaNhwcActivations, ConvolutionsInEveryStorage) {
  const Storage F = Storage::fp32_nchw, B = S;
  gpu->tune_for_batch(8);
  for (const ConvGeom& g :
       {conv_geom(8, 16, 12, 32, 1), conv_geom(8, 32, 12, 16, 2), conv_geom(5, 16, 12, 32, 1)}) {
    const int ohw = g.out_h * g.out_w;
    const std::string shape = "conv n" + std::to_string(g.n) + " c" + std::to_string(g.c) + " k" +
                              std::to_string(g.k) + " s" + std::to_string(g.stride_h);
    auto w = twin_random(std::size_t(g.k) * g.c * 9), bias = twin_random(std::size_t(g.k));
    for (int pairing = 0; pairing < 16; ++pairing) {
      const Storage xs = pairing & 1 ? B : F, ys = pairing & 2 ? B : F;
      const bool with_bias = pairing & 4, keeping = pairing & 8;
      const std::string what = shape + (xs == B ? " x nhwc" : " x nchw") +
                               (ys == B ? " y nhwc" : " y nchw") + (with_bias ? " bias" : "") +
                               (keeping ? " kept" : "");
      const float* bc = with_bias ? bias.cf() : nullptr;
      const float* bg = with_bias ? bias.gf() : nullptr;
      // Inputs as values of the stored type in both storages.
      auto xb = stored_twin(g.n, g.c, g.h * g.w);
      auto xf = twin(widened(*cpu, xb.cp(), xb));
      const void* xc = xs == B ? xb.cp() : xf.cf();
      const void* xg = xs == B ? xb.gp() : xf.gf();
      auto yb = stored_out(g.n, g.k, ohw);
      auto yf = twin_out(std::size_t(g.n) * g.k * ohw);
      void* yc = ys == B ? yb.cp() : yf.cf();
      void* yg = ys == B ? yb.gp() : yf.gf();
      // A layer's kept operands (the weights' converted copy, x's when x is NCHW), or none.
      DeviceBuffer kept(*gpu, keeping ? gpu->conv_kept_bytes(g, xs) : 0);
      void* kept_g = kept.as<void>();
      cpu->conv2d_forward_stored(g, xs, xc, w.cf(), bc, ys, yc, nullptr);
      gpu->conv2d_forward_stored(g, xs, xg, w.gf(), bg, ys, yg, kept_g);
      const auto ref_y = ys == B ? widened(*cpu, yb.cp(), yb) : host(*cpu, yf.c.as<void>(), yf.n);
      const auto got_y = ys == B ? widened(*gpu, yb.gp(), yb) : host(*gpu, yf.g.as<void>(), yf.n);
      double scale = 0;
      for (float v : ref_y) scale = std::max(scale, double(std::fabs(v)));
      expect_close(ref_y, got_y, 1e-2 * scale, 1e-2, what + " y");

      auto dyb = stored_twin(g.n, g.k, ohw);
      auto dyf = twin(widened(*cpu, dyb.cp(), dyb));
      const void* dyc = ys == B ? dyb.cp() : dyf.cf();
      const void* dyg = ys == B ? dyb.gp() : dyf.gf();
      auto dxb = stored_out(g.n, g.c, g.h * g.w);
      auto dxf = twin_out(std::size_t(g.n) * g.c * g.h * g.w);
      void* dxc = xs == B ? dxb.cp() : dxf.cf();
      void* dxg = xs == B ? dxb.gp() : dxf.gf();
      auto dw = twin_out(w.n), db = twin_out(bias.n);
      cpu->conv2d_backward_stored(g, xs, xc, nullptr, w.cf(), ys, dyc, dxc, dw.cf(),
                                  with_bias ? db.cf() : nullptr);
      gpu->conv2d_backward_stored(g, xs, xg, kept_g, w.gf(), ys, dyg, dxg, dw.gf(),
                                  with_bias ? db.gf() : nullptr);
      // The bias gradient sums the same dy on both sides.
      if (with_bias) expect_close(db, 1e-3, 1e-4, what + " db");
      const auto ref_dx =
          xs == B ? widened(*cpu, dxb.cp(), dxb) : host(*cpu, dxf.c.as<void>(), dxf.n);
      const auto got_dx =
          xs == B ? widened(*gpu, dxb.gp(), dxb) : host(*gpu, dxf.g.as<void>(), dxf.n);
      scale = 0;
      for (float v : ref_dx) scale = std::max(scale, double(std::fabs(v)));
      expect_close(ref_dx, got_dx, 1e-2 * scale, 1e-2, what + " dx");
      const auto ref_dw = host(*cpu, dw.c.as<void>(), dw.n);
      scale = 0;
      for (float v : ref_dw) scale = std::max(scale, double(std::fabs(v)));
      expect_close(ref_dw, host(*gpu, dw.g.as<void>(), dw.n), 1e-2 * scale, 1e-2, what + " dw");
    }
  }
}

// A whole conv-block net and a ResNet keeping channels-last activations on the GPU against the
// same nets on the CPU's reference: one training step's logits and every layer's gradient
// direction (bf16 products and roundings move a deep net's gradients by tens of percent at these
// sizes, but keep their direction: cosines of about 0.9 and up over random inputs;
// tf32's are closer; a tensor in the wrong layout scrambles it, to near 0).
TEST_P(CudaNhwcActivations, NetworksMatchTheReference) {
  ModelSpec convnet;
  convnet.preset = Preset::convnet;
  convnet.net_width = 16;
  convnet.block_depth = 2;
  ModelSpec resnet;
  resnet.preset = Preset::resnet;
  resnet.depth = 20;
  for (const ModelSpec& m : {convnet, resnet}) {
    const int batch = 16, classes = 10;
    const Shape in{3, 16, 16};
    Network a(*cpu, m, in, classes, batch, 5), b(*gpu, m, in, classes, batch, 5);
    for (std::size_t i = 0; i < a.layers().size(); ++i)
      EXPECT_EQ(a.layers()[i]->out_storage(), b.layers()[i]->out_storage()) << "layer " << i;
    EXPECT_EQ(b.layers()[0]->out_storage(), S);
    auto x = twin_random(std::size_t(batch) * in.numel());
    auto d = twin_random(std::size_t(batch) * classes, -0.1f, 0.1f);
    const float* la = a.forward(x.cf(), batch, true);
    const float* lb = b.forward(x.gf(), batch, true);
    const auto ra = host(*cpu, la, std::size_t(batch) * classes);
    const auto rb = host(*gpu, lb, std::size_t(batch) * classes);
    double scale = 0;
    for (float v : ra) scale = std::max(scale, double(std::fabs(v)));
    expect_close(ra, rb, 0.05 * scale, 0.05, "logits");
    a.backward(d.cf(), batch);
    b.backward(d.gf(), batch);
    const auto ga = host(*cpu, a.grads(), a.param_count());
    const auto gb = host(*gpu, b.grads(), b.param_count());
    std::size_t offset = 0;
    for (const auto& layer : a.layers()) {
      const std::size_t n = layer->param_count();
      double ab = 0, aa = 0, bb = 0;
      for (std::size_t i = offset; i < offset + n; ++i) {
        ab += double(ga[i]) * gb[i];
        aa += double(ga[i]) * ga[i];
        bb += double(gb[i]) * gb[i];
      }
      if (n) {
        EXPECT_GT(ab / std::sqrt(aa * bb), is_bf16(S) ? 0.75 : 0.95)
            << layer->describe() << "'s gradient (input seed " << seed << ")";
      }
      offset += n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothTypes, CudaNhwcActivations,
                         testing::Values(Storage::bf16_nhwc, Storage::fp32_nhwc),
                         [](const testing::TestParamInfo<Storage>& param) {
                           return is_bf16(param.param) ? "bf16" : "fp32";
                         });

}  // namespace
}  // namespace sweep::trainer::test
