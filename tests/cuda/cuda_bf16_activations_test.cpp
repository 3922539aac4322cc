/*
 * cuda_bf16_activations_test.cpp — the CUDA backend's ops on activations kept in bf16 NHWC
 * (backend.h, "activations kept in bf16") against the reference every backend has: widen, the
 * CPU's fp32 op, narrow (backend_bf16_reference.cpp). Both sides read the same bf16 bits.
 *
 * Ops whose result is one rounding of an exactly computed value (ReLU, sums, max pooling) must
 * give the same bits; batch norm and average pooling sum in another order, so their bf16 outputs
 * may differ by one rounding step (2^-8 relative) and their fp32 outputs by float error. The
 * convolutions run bf16 products on the GPU against fp32 ones on bf16 inputs on the CPU.
 */
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/layers/layer.h"
#include "trainer/models.h"
#include "trainer/network.h"

namespace sweep::trainer::test {
namespace {

class CudaBf16Activations : public CudaVsCpu {
 protected:
  void SetUp() override {
    CudaVsCpu::SetUp();
    if (IsSkipped()) return;
    gpu = std::make_unique<cuda::CudaBackend>(0, cuda::MathMode::bf16);
    auto ref = std::make_unique<CpuBackend>(0);
    ref->set_bf16_activations(true);
    cpu = std::move(ref);
  }

  // A bf16 NHWC tensor of n images, c channels, hw pixels, the same bits on both backends.
  struct Bf16Twin {
    DeviceBuffer c, g;
    int n = 0, ch = 0, hw = 0;
    Bf16* cb() const { return c.as<Bf16>(); }
    Bf16* gb() const { return g.as<Bf16>(); }
    std::size_t size() const { return std::size_t(n) * ch * hw; }
  };
  Bf16Twin bf16_twin(int n, int c, int hw, float lo = -1.f, float hi = 1.f) {
    const std::vector<float> v = random(std::size_t(n) * c * hw, lo, hi);
    Bf16Twin t{DeviceBuffer(*cpu, v.size() * 2), DeviceBuffer(*gpu, v.size() * 2), n, c, hw};
    cpu->to_bf16_nhwc(v.data(), t.cb(), n, c, hw);
    std::vector<std::uint16_t> bits(v.size());
    cpu->copy_to_host(bits.data(), t.cb(), v.size() * 2);
    gpu->copy_to_device(t.gb(), bits.data(), v.size() * 2);
    return t;
  }
  // An output, poisoned with NaN's bits on both.
  Bf16Twin bf16_out(int n, int c, int hw) {
    Bf16Twin t{DeviceBuffer(*cpu, std::size_t(n) * c * hw * 2),
               DeviceBuffer(*gpu, std::size_t(n) * c * hw * 2), n, c, hw};
    const std::vector<std::uint16_t> nan(t.size(), 0x7fc0);
    cpu->copy_to_device(t.cb(), nan.data(), nan.size() * 2);
    gpu->copy_to_device(t.gb(), nan.data(), nan.size() * 2);
    return t;
  }
  // The tensor as fp32 NCHW, read through each backend's own widening.
  std::vector<float> widened(Backend& b, const Bf16* p, const Bf16Twin& t) {
    DeviceBuffer f(b, t.size() * 4);
    b.from_bf16_nhwc(p, f.f(), t.n, t.ch, t.hw);
    return host(b, f.as<void>(), t.size());
  }
  void expect_same_bits(const Bf16Twin& t, const std::string& what) {
    EXPECT_EQ(host<std::uint16_t>(*cpu, t.c.as<void>(), t.size()),
              host<std::uint16_t>(*gpu, t.g.as<void>(), t.size()))
        << what;
  }
  // Within one bf16 rounding step (relative) plus tol.
  void expect_bf16_near(const Bf16Twin& t, double tol, const std::string& what) {
    expect_close(widened(*cpu, t.cb(), t), widened(*gpu, t.gb(), t), tol, 1.0 / 128, what);
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

TEST_F(CudaBf16Activations, ConversionsGiveTheReferenceBits) {
  for (const Shape4& s : kShapes) {
    const std::size_t n = std::size_t(s.n) * s.c * s.h * s.w;
    auto x = twin_random(n, -3.f, 3.f);
    Bf16Twin y = bf16_out(s.n, s.c, s.h * s.w);
    cpu->to_bf16_nhwc(x.cf(), y.cb(), s.n, s.c, s.h * s.w);
    gpu->to_bf16_nhwc(x.gf(), y.gb(), s.n, s.c, s.h * s.w);
    expect_same_bits(y, "narrow " + tag(s));
    EXPECT_EQ(widened(*cpu, y.cb(), y), widened(*gpu, y.gb(), y)) << "widen " << tag(s);
  }
}

TEST_F(CudaBf16Activations, ElementwiseOpsGiveTheReferenceBits) {
  const int n = 1000003;  // not a multiple of any vector width
  auto a = bf16_twin(1, 1, n, -2.f, 2.f), b = bf16_twin(1, 1, n, -2.f, 2.f);
  for (bool relu : {false, true}) {
    auto y = bf16_out(1, 1, n);
    cpu->add_bf16(a.cb(), b.cb(), y.cb(), n, relu);
    gpu->add_bf16(a.gb(), b.gb(), y.gb(), n, relu);
    expect_same_bits(y, relu ? "add_relu" : "add");
  }
  auto y = bf16_out(1, 1, n), dx = bf16_out(1, 1, n);
  cpu->relu_forward_bf16(a.cb(), y.cb(), n);
  gpu->relu_forward_bf16(a.gb(), y.gb(), n);
  expect_same_bits(y, "relu forward");
  cpu->relu_backward_bf16(y.cb(), b.cb(), dx.cb(), n);
  gpu->relu_backward_bf16(y.gb(), b.gb(), dx.gb(), n);
  expect_same_bits(dx, "relu backward");
  gpu->add_bf16(a.gb(), b.gb(), a.gb(), n, false);  // in place
  cpu->add_bf16(a.cb(), b.cb(), a.cb(), n, false);
  expect_same_bits(a, "add in place");
}

TEST_F(CudaBf16Activations, MaxPoolGivesTheReferenceBits) {
  for (const Shape4& s : kShapes) {
    const PoolGeom g{s.n, s.c, s.h, s.w, 2, 2, 2, 2, 0, 0, s.h / 2, s.w / 2};
    const int ohw = g.out_h * g.out_w;
    auto x = bf16_twin(s.n, s.c, s.h * s.w);
    auto y = bf16_out(s.n, s.c, ohw), dy = bf16_twin(s.n, s.c, ohw),
         dx = bf16_out(s.n, s.c, s.h * s.w);
    cpu->maxpool2x2_forward_bf16(g, x.cb(), y.cb());
    gpu->maxpool2x2_forward_bf16(g, x.gb(), y.gb());
    expect_same_bits(y, "max pool " + tag(s));
    cpu->maxpool2x2_backward_bf16(g, x.cb(), y.cb(), dy.cb(), dx.cb());
    gpu->maxpool2x2_backward_bf16(g, x.gb(), y.gb(), dy.gb(), dx.gb());
    expect_same_bits(dx, "max pool backward " + tag(s));
  }
  // Ties go to the first maximum of the window, as in fp32.
  const PoolGeom g{2, 8, 4, 4, 2, 2, 2, 2, 0, 0, 2, 2};
  Bf16Twin x = bf16_out(2, 8, 16), y = bf16_out(2, 8, 4), dx = bf16_out(2, 8, 16);
  auto dy = bf16_twin(2, 8, 4);
  const std::vector<std::uint16_t> ones(x.size(), 0x3f80);
  cpu->copy_to_device(x.cb(), ones.data(), ones.size() * 2);
  gpu->copy_to_device(x.gb(), ones.data(), ones.size() * 2);
  cpu->maxpool2x2_forward_bf16(g, x.cb(), y.cb());
  gpu->maxpool2x2_forward_bf16(g, x.gb(), y.gb());
  cpu->maxpool2x2_backward_bf16(g, x.cb(), y.cb(), dy.cb(), dx.cb());
  gpu->maxpool2x2_backward_bf16(g, x.gb(), y.gb(), dy.gb(), dx.gb());
  expect_same_bits(dx, "max pool backward, ties");
}

TEST_F(CudaBf16Activations, GlobalAveragePoolMatchesTheReference) {
  for (const Shape4& s : kShapes) {
    const PoolGeom g{s.n, s.c, s.h, s.w, s.h, s.w, s.h, s.w, 0, 0, 1, 1};
    auto x = bf16_twin(s.n, s.c, s.h * s.w);
    auto y = twin_out(std::size_t(s.n) * s.c), dy = twin_random(std::size_t(s.n) * s.c);
    auto dx = bf16_out(s.n, s.c, s.h * s.w);
    cpu->global_avgpool_forward_bf16(g, x.cb(), y.cf());
    gpu->global_avgpool_forward_bf16(g, x.gb(), y.gf());
    expect_close(y, 1e-6, 1e-5, "global average " + tag(s));
    cpu->global_avgpool_backward_bf16(g, dy.cf(), dx.cb());
    gpu->global_avgpool_backward_bf16(g, dy.gf(), dx.gb());
    expect_bf16_near(dx, 0, "global average backward " + tag(s));
  }
}

TEST_F(CudaBf16Activations, BatchNormMatchesTheReference) {
  for (const Shape4& s : kShapes) {
    for (bool relu : {false, true}) {
      const std::string what = "batch norm " + tag(s) + (relu ? " + relu" : "");
      const BatchNormGeom g{s.n, s.c, s.h * s.w, 1e-5f, 0.1f};
      const std::size_t c = std::size_t(s.c);
      auto x = bf16_twin(s.n, s.c, s.h * s.w, -2.f, 3.f);
      auto gamma = twin_random(c, 0.5f, 1.5f), beta = twin_random(c);
      auto mean = twin_random(c), var = twin_random(c, 0.5f, 2.f);
      auto save_mean = twin_out(c), save_invstd = twin_out(c);
      auto y = bf16_out(s.n, s.c, s.h * s.w);
      cpu->batchnorm_forward_train_bf16(g, x.cb(), gamma.cf(), beta.cf(), mean.cf(), var.cf(),
                                        save_mean.cf(), save_invstd.cf(), y.cb(), relu);
      gpu->batchnorm_forward_train_bf16(g, x.gb(), gamma.gf(), beta.gf(), mean.gf(), var.gf(),
                                        save_mean.gf(), save_invstd.gf(), y.gb(), relu);
      expect_bf16_near(y, 1e-3, what + " y");
      expect_close(save_mean, 1e-5, 1e-4, what + " mean");
      expect_close(save_invstd, 1e-5, 1e-4, what + " invstd");
      expect_close(mean, 1e-5, 1e-4, what + " running mean");
      expect_close(var, 1e-5, 1e-4, what + " running variance");

      auto dy = bf16_twin(s.n, s.c, s.h * s.w), dx = bf16_out(s.n, s.c, s.h * s.w);
      auto dgamma = twin_out(c), dbeta = twin_out(c);
      const Bf16* ry_c = relu ? y.cb() : nullptr;
      const Bf16* ry_g = relu ? y.gb() : nullptr;
      cpu->batchnorm_backward_bf16(g, x.cb(), ry_c, dy.cb(), gamma.cf(), save_mean.cf(),
                                   save_invstd.cf(), dx.cb(), dgamma.cf(), dbeta.cf());
      // The GPU from the CPU's saved statistics and output: only the backward's own error.
      auto cpu_y = host<std::uint16_t>(*cpu, y.c.as<void>(), y.size());
      gpu->copy_to_device(y.gb(), cpu_y.data(), cpu_y.size() * 2);
      auto cm = host(*cpu, save_mean.c.as<void>(), c), ci = host(*cpu, save_invstd.c.as<void>(), c);
      gpu->copy_to_device(save_mean.gf(), cm.data(), c * 4);
      gpu->copy_to_device(save_invstd.gf(), ci.data(), c * 4);
      gpu->batchnorm_backward_bf16(g, x.gb(), ry_g, dy.gb(), gamma.gf(), save_mean.gf(),
                                   save_invstd.gf(), dx.gb(), dgamma.gf(), dbeta.gf());
      expect_bf16_near(dx, 2e-3, what + " dx");
      expect_close(dgamma, 1e-4, 1e-4, what + " dgamma");
      expect_close(dbeta, 1e-4, 1e-4, what + " dbeta");
      // In place (dx = dy), as the network runs a folded ReLU's batch norm.
      gpu->batchnorm_backward_bf16(g, x.gb(), ry_g, dy.gb(), gamma.gf(), save_mean.gf(),
                                   save_invstd.gf(), dy.gb(), dgamma.gf(), dbeta.gf());
      EXPECT_EQ(host<std::uint16_t>(*gpu, dy.g.as<void>(), dy.size()),
                host<std::uint16_t>(*gpu, dx.g.as<void>(), dx.size()))
          << what << " in place";

      auto yi = bf16_out(s.n, s.c, s.h * s.w);
      cpu->batchnorm_forward_infer_bf16(g, x.cb(), gamma.cf(), beta.cf(), mean.cf(), var.cf(),
                                        yi.cb(), relu);
      gpu->batchnorm_forward_infer_bf16(g, x.gb(), gamma.gf(), beta.gf(), mean.gf(), var.gf(),
                                        yi.gb(), relu);
      expect_bf16_near(yi, 1e-3, what + " inference");
    }
  }
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
// operands kept from forward to backward, on the shape's bf16 plan and (a batch the backend was
// not tuned for) on the tf32 plan with conversions around it. The CPU's
// fp32 products on the same bf16 inputs are the reference (the GPU also rounds the weights: a few
// 1e-3 of the largest).
TEST_F(CudaBf16Activations, ConvolutionsInEveryStorage) {
  constexpr Storage F = Storage::fp32_nchw, B = Storage::bf16_nhwc;
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
      const std::string what = shape + (xs == B ? " x bf16" : " x fp32") +
                               (ys == B ? " y bf16" : " y fp32") + (with_bias ? " bias" : "") +
                               (keeping ? " kept" : "");
      const float* bc = with_bias ? bias.cf() : nullptr;
      const float* bg = with_bias ? bias.gf() : nullptr;
      // Inputs as bf16 values in both storages.
      auto xb = bf16_twin(g.n, g.c, g.h * g.w);
      auto xf = twin(widened(*cpu, xb.cb(), xb));
      const void* xc = xs == B ? static_cast<const void*>(xb.cb()) : xf.cf();
      const void* xg = xs == B ? static_cast<const void*>(xb.gb()) : xf.gf();
      auto yb = bf16_out(g.n, g.k, ohw);
      auto yf = twin_out(std::size_t(g.n) * g.k * ohw);
      void* yc = ys == B ? static_cast<void*>(yb.cb()) : yf.cf();
      void* yg = ys == B ? static_cast<void*>(yb.gb()) : yf.gf();
      // A layer's kept operands (the weights' bf16 copy, x's when x is fp32), or none.
      DeviceBuffer kept(*gpu, keeping ? gpu->conv_kept_bytes(g, xs) : 0);
      void* kept_g = kept.as<void>();
      cpu->conv2d_forward_stored(g, xs, xc, w.cf(), bc, ys, yc, nullptr);
      gpu->conv2d_forward_stored(g, xs, xg, w.gf(), bg, ys, yg, kept_g);
      const auto ref_y = ys == B ? widened(*cpu, yb.cb(), yb) : host(*cpu, yf.c.as<void>(), yf.n);
      const auto got_y = ys == B ? widened(*gpu, yb.gb(), yb) : host(*gpu, yf.g.as<void>(), yf.n);
      double scale = 0;
      for (float v : ref_y) scale = std::max(scale, double(std::fabs(v)));
      expect_close(ref_y, got_y, 1e-2 * scale, 1e-2, what + " y");

      auto dyb = bf16_twin(g.n, g.k, ohw);
      auto dyf = twin(widened(*cpu, dyb.cb(), dyb));
      const void* dyc = ys == B ? static_cast<const void*>(dyb.cb()) : dyf.cf();
      const void* dyg = ys == B ? static_cast<const void*>(dyb.gb()) : dyf.gf();
      auto dxb = bf16_out(g.n, g.c, g.h * g.w);
      auto dxf = twin_out(std::size_t(g.n) * g.c * g.h * g.w);
      void* dxc = xs == B ? static_cast<void*>(dxb.cb()) : dxf.cf();
      void* dxg = xs == B ? static_cast<void*>(dxb.gb()) : dxf.gf();
      auto dw = twin_out(w.n), db = twin_out(bias.n);
      cpu->conv2d_backward_stored(g, xs, xc, nullptr, w.cf(), ys, dyc, dxc, dw.cf(),
                                  with_bias ? db.cf() : nullptr);
      gpu->conv2d_backward_stored(g, xs, xg, kept_g, w.gf(), ys, dyg, dxg, dw.gf(),
                                  with_bias ? db.gf() : nullptr);
      // The bias gradient sums the same bf16-valued dy on both sides.
      if (with_bias) expect_close(db, 1e-3, 1e-4, what + " db");
      const auto ref_dx =
          xs == B ? widened(*cpu, dxb.cb(), dxb) : host(*cpu, dxf.c.as<void>(), dxf.n);
      const auto got_dx =
          xs == B ? widened(*gpu, dxb.gb(), dxb) : host(*gpu, dxf.g.as<void>(), dxf.n);
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

// A whole conv-block net and a ResNet keeping bf16 activations on the GPU against the same nets on
// the CPU's reference: one training step's logits and every layer's gradient direction (bf16
// products and roundings move a deep net's gradients by tens of percent at these sizes, but
// keep their direction: cosines of 0.898 and up seen on an H200 over random inputs; a tensor in
// the wrong layout scrambles it, to near 0).
TEST_F(CudaBf16Activations, NetworksMatchTheReference) {
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
    EXPECT_EQ(b.layers()[0]->out_storage(), Storage::bf16_nhwc);
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
        EXPECT_GT(ab / std::sqrt(aa * bb), 0.75)
            << layer->describe() << "'s gradient (input seed " << seed << ")";
      }
      offset += n;
    }
  }
}

}  // namespace
}  // namespace sweep::trainer::test
