/*
 * cuda_bf16_cast_test.cpp — the bf16 path's pieces on their own: the conversions between fp32
 * NCHW and bf16 NHWC (trainer/cuda/nhwc_cast.cuh), exact against a host transpose, on the tiled
 * shapes and the element-by-element ones, several jobs in one launch; and the graph API plan's
 * weight gradient in both of its types (trainer/cuda/cudnn_graph.h) against the CPU backend.
 */
#include <cuda_bf16.h>

#include <cstdio>
#include <cstring>

#include "tests/trainer/cuda/cuda_test_util.h"
#include "trainer/cuda/cudnn_graph.h"
#include "trainer/cuda/nhwc_cast.cuh"

namespace sweep::trainer::test {
namespace {

std::uint16_t bf16_bits(float v) {  // round to nearest, ties to even (as __float2bfloat16_rn)
  std::uint32_t u = 0;
  std::memcpy(&u, &v, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::uint16_t(u >> 16);
}
float from_bits(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float v = 0;
  std::memcpy(&v, &u, 4);
  return v;
}

struct Shape3 {
  int n, c, hw;
};

class CudaBf16Cast : public CudaVsCpu {};

// Three jobs per launch (the most one launch takes), of different kinds, so each block must read
// its own job: tiled with partial tiles, element by element, and a straight cast.
TEST_F(CudaBf16Cast, NarrowAndWidenTransposeExactly) {
  const std::vector<std::vector<Shape3>> launches = {
      {{2, 40, 50}, {3, 5, 7}, {4, 1, 100}},
      {{1, 33, 17}, {5, 64, 1}, {2, 16, 16}},
      {{3, 128, 36}, {1, 2, 2}, {2, 17, 1000}},
  };
  for (const auto& shapes : launches) {
    std::vector<DeviceBuffer> f32, b16, back;
    std::vector<std::vector<float>> values, biases;
    std::vector<DeviceBuffer> bias_d;
    for (const Shape3& s : shapes) {
      const std::size_t count = std::size_t(s.n) * s.c * s.hw;
      values.push_back(random(count, -3.f, 3.f));
      f32.emplace_back(*gpu, count * 4);
      b16.emplace_back(*gpu, count * 2);
      back.emplace_back(*gpu, count * 4);
      gpu->copy_to_device(f32.back().f(), values.back().data(), count * 4);
      biases.push_back(random(std::size_t(s.c)));
      bias_d.emplace_back(*gpu, std::size_t(s.c) * 4);
      gpu->copy_to_device(bias_d.back().f(), biases.back().data(), std::size_t(s.c) * 4);
    }
    const auto job = [&](std::size_t i) {
      return cuda::ToNhwc<__nv_bfloat16>{f32[i].f(), b16[i].as<__nv_bfloat16>(), shapes[i].n,
                                         shapes[i].c, shapes[i].hw};
    };
    cuda::to_nhwc<__nv_bfloat16>({job(0), job(1), job(2)}, gpu->joined_stream());
    const auto wjob = [&](std::size_t i) {
      return cuda::ToNchw<__nv_bfloat16>{
          b16[i].as<__nv_bfloat16>(),      back[i].f(), shapes[i].n, shapes[i].c, shapes[i].hw,
          i == 1 ? nullptr : bias_d[i].f()};
    };
    cuda::to_nchw<__nv_bfloat16>({wjob(0), wjob(1), wjob(2)}, gpu->joined_stream());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const auto [n, c, hw] = shapes[i];
      char tag[64];
      std::snprintf(tag, sizeof tag, "n%d c%d hw%d", n, c, hw);
      const auto narrowed = host<std::uint16_t>(*gpu, b16[i].as<void>(), values[i].size());
      const auto widened = host<float>(*gpu, back[i].as<void>(), values[i].size());
      int wrong_narrow = 0, wrong_widen = 0;
      for (int ni = 0; ni < n; ++ni)
        for (int ci = 0; ci < c; ++ci)
          for (int p = 0; p < hw; ++p) {
            const std::size_t nchw = (std::size_t(ni) * c + ci) * hw + p,
                              nhwc = (std::size_t(ni) * hw + p) * c + ci;
            const std::uint16_t want = bf16_bits(values[i][nchw]);
            wrong_narrow += narrowed[nhwc] != want;
            const float wide = from_bits(want) + (i == 1 ? 0.f : biases[i][std::size_t(ci)]);
            wrong_widen += widened[nchw] != wide;
          }
      EXPECT_EQ(wrong_narrow, 0) << tag;
      EXPECT_EQ(wrong_widen, 0) << tag;
    }
  }
}

// The weight gradient written in fp32 (the parameters' K,C,R,S) and in bf16 (K,R,S,C): both
// against the CPU's fp32 gradient of the same rounded operands.
TEST_F(CudaBf16Cast, GraphPlanWeightGradientInBothTypes) {
  const ConvGeom shapes[] = {
      {8, 32, 16, 16, 64, 3, 3, 1, 1, 1, 1, 16, 16},  // conv-block net
      {4, 16, 9, 9, 24, 3, 3, 2, 2, 1, 1, 5, 5},      // stride 2, odd sizes
  };
  cuda::CudnnHandle dnn = cuda::make_cudnn();
  SWEEP_CHECK_CUDNN(cudnnSetStream(dnn.get(), gpu->joined_stream()));
  for (const ConvGeom& g : shapes) {
    const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w,
                      ny = std::size_t(g.n) * g.k * g.out_h * g.out_w,
                      nw = std::size_t(g.k) * g.c * g.r * g.s;
    // Rounded operands in NCHW for the CPU, the same bits in NHWC for the plan.
    std::vector<float> x(nx), dy(ny);
    std::vector<std::uint16_t> xb(nx), dyb(ny);
    const auto fill = [&](std::vector<float>& v, std::vector<std::uint16_t>& b, int n, int c,
                          int hw) {
      const auto r = random(v.size());
      for (int ni = 0; ni < n; ++ni)
        for (int ci = 0; ci < c; ++ci)
          for (int p = 0; p < hw; ++p) {
            const std::size_t nchw = (std::size_t(ni) * c + ci) * hw + p;
            b[(std::size_t(ni) * hw + p) * c + ci] = bf16_bits(r[nchw]);
            v[nchw] = from_bits(bf16_bits(r[nchw]));
          }
    };
    fill(x, xb, g.n, g.c, g.h * g.w);
    fill(dy, dyb, g.n, g.k, g.out_h * g.out_w);
    auto xc = twin(x), dyc = twin(dy), wc = twin_random(nw), dwc = twin_out(nw);
    cpu->conv2d_backward(g, xc.cf(), wc.cf(), dyc.cf(), nullptr, dwc.cf(), nullptr);
    const auto want = host(*cpu, dwc.c.as<void>(), nw);
    DeviceBuffer xd(*gpu, nx * 2), dyd(*gpu, ny * 2), dwd(*gpu, nw * 4);
    gpu->copy_to_device(xd.as<void>(), xb.data(), nx * 2);
    gpu->copy_to_device(dyd.as<void>(), dyb.data(), ny * 2);
    using FilterGradient = cuda::NhwcConvPlan::FilterGradient;
    for (auto type : {FilterGradient::nchw_fp32, FilterGradient::nhwc}) {
      const bool fp32 = type == FilterGradient::nchw_fp32;
      const std::string tag = std::string(fp32 ? "fp32" : "bf16") + " dw, c" + std::to_string(g.c) +
                              " k" + std::to_string(g.k) + " s" + std::to_string(g.stride_h);
      cuda::NhwcConvPlan plan(dnn.get(), g, Storage::bf16_nhwc, std::size_t{256} << 20, type);
      ASSERT_EQ(plan.filter_gradient_nchw(), fp32) << tag;
      DeviceBuffer ws(*gpu, std::max<std::size_t>(plan.workspace_bytes(), 16));
      plan.backward_filter(dnn.get(), xd.as<void>(), dyd.as<void>(), dwd.as<void>(), ws.as<void>());
      std::vector<float> got(nw);
      if (fp32) {
        got = host(*gpu, dwd.as<void>(), nw);
      } else {  // bf16 K,R,S,C back to K,C,R,S
        const auto bits = host<std::uint16_t>(*gpu, dwd.as<void>(), nw);
        const int rs = g.r * g.s;
        for (int k = 0; k < g.k; ++k)
          for (int c = 0; c < g.c; ++c)
            for (int q = 0; q < rs; ++q)
              got[(std::size_t(k) * g.c + c) * rs + q] =
                  from_bits(bits[(std::size_t(k) * rs + q) * g.c + c]);
      }
      double scale = 0;
      for (float v : want) scale = std::max(scale, double(std::fabs(v)));
      // fp32: accumulation order only; bf16: plus the result's rounding (2^-8 relative).
      expect_close(want, got, (fp32 ? 1e-4 : 5e-3) * scale, fp32 ? 1e-4 : 1e-2, tag);
    }
  }
}

}  // namespace
}  // namespace sweep::trainer::test
