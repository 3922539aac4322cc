/*
 * bench_bf16_cast.cu — GPU time of the bf16 conversions (trainer/cuda/nhwc_cast.cuh) at the shapes
 * the bf16 convolutions convert: fp32 NCHW to bf16 NHWC (narrow) and back (widen), each timed as 20
 * calls in a CUDA graph, with the bandwidth that implies (4 + 2 bytes an element); and the
 * element-by-element casts they replaced, as the baseline.
 *   bench_bf16_cast [--shape N C HW]...
 * Prints `RESULT op=narrow|widen n=.. c=.. hw=.. us=.. gbps=..`.
 */
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "trainer/cuda/cuda_raii.h"
#include "trainer/cuda/graph_timing.h"
#include "trainer/cuda/nhwc_cast.cuh"

using namespace sweep::trainer::cuda;

namespace {

// The element-by-element casts bf16.cuh had before its tiled ones, as the baseline: threads walk
// the destination in order, reading with a stride of hw (narrow) or c (widen).
__global__ void naive_narrow(const float* src, __nv_bfloat16* dst, int n, int c, int hw) {
  const std::size_t total = std::size_t(n) * c * hw;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t ci = o % c, rest = o / c, p = rest % hw, ni = rest / hw;
    dst[o] = __float2bfloat16_rn(src[(ni * c + ci) * hw + p]);
  }
}
__global__ void naive_widen(const __nv_bfloat16* src, float* dst, int n, int c, int hw) {
  const std::size_t total = std::size_t(n) * c * hw;
  for (std::size_t o = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; o < total;
       o += std::size_t(gridDim.x) * blockDim.x) {
    const std::size_t p = o % hw, rest = o / hw, ci = rest % c, ni = rest / c;
    dst[o] = __bfloat162float(src[(ni * hw + p) * c + ci]);
  }
}

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 65535));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bf16 conversion kernels"};
  std::vector<std::vector<int>> shapes{{256, 32, 1024}, {256, 3, 1024}, {256, 64, 256},
                                       {256, 128, 64},  {128, 512, 16}, {64, 800, 1}};
  app.add_option("--shape", shapes, "N C HW (repeatable)")->expected(3);
  CLI11_PARSE(app, argc, argv);
  try {
    Stream stream = make_stream();
    for (const auto& s : shapes) {
      const int n = s[0], c = s[1], hw = s[2];
      const std::size_t count = std::size_t(n) * c * hw;
      void *f = nullptr, *b = nullptr;
      SWEEP_CHECK_CUDA(cudaMalloc(&f, count * 4));
      SWEEP_CHECK_CUDA(cudaMalloc(&b, count * 2));
      DeviceMemory fm, bm;
      fm.adopt(f, count * 4);
      bm.adopt(b, count * 2);
      SWEEP_CHECK_CUDA(cudaMemset(f, 0, count * 4));
      auto* fp = static_cast<float*>(f);
      auto* bp = static_cast<__nv_bfloat16*>(b);
      const float narrow_us = graph_time_us(
          stream.get(),
          [&] {
            to_nhwc<__nv_bfloat16>({{fp, bp, n, c, hw}}, stream.get());
          },
          20, 5);
      const float widen_us = graph_time_us(
          stream.get(),
          [&] {
            to_nchw<__nv_bfloat16>({{bp, fp, n, c, hw}}, stream.get());
          },
          20, 5);
      const float naive_narrow_us = graph_time_us(
          stream.get(),
          [&] { naive_narrow<<<blocks_for(count), 256, 0, stream.get()>>>(fp, bp, n, c, hw); }, 20,
          5);
      const float naive_widen_us = graph_time_us(
          stream.get(),
          [&] { naive_widen<<<blocks_for(count), 256, 0, stream.get()>>>(bp, fp, n, c, hw); }, 20,
          5);
      for (auto [op, us] :
           {std::pair{"narrow", narrow_us}, std::pair{"widen", widen_us},
            std::pair{"naive_narrow", naive_narrow_us}, std::pair{"naive_widen", naive_widen_us}})
        std::printf("RESULT op=%s n=%d c=%d hw=%d us=%.2f gbps=%.0f\n", op, n, c, hw, double(us),
                    double(count) * 6.0 / (double(us) * 1e3));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_bf16_cast: %s\n", e.what());
    return 1;
  }
  return 0;
}
