/*
 * bench_conv_wgrad.cu — a feasibility probe for issue 16's next step: is a direct weight-gradient
 * kernel of our own faster than cuDNN's pick at LeNet's small shapes? (Under ncu the weight
 * gradient is about a quarter of a LeNet step, and cuDNN's convolution kernels are what bounds a
 * fused array: bench/RESULTS.md.) Not used by the trainer.
 *
 * For LeNet's two convolutions at batch 64 (and a wider batch), times cudnnConvolutionBackward-
 * Filter with the algorithm cudnnFind picks (trainer/cuda's ConvPlan, fp32) against
 * direct_wgrad below (split over 1 to 64 parts of the positions, summed by a second kernel), alone
 * (one stream, back to back), and checks they agree.
 *
 *   bench_conv_wgrad [--iters 2000]
 * Prints `RESULT peer=conv-wgrad shape=.. cudnn_us=.. direct_us=.. max_rel_diff=..`.
 */
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/check.h"
#include "trainer/cuda/cuda_raii.h"
#include "trainer/cuda/cudnn_legacy.h"

namespace {

using namespace sweep::trainer;
using namespace sweep::trainer::cuda;

// dw (K, C, R, S) of a stride-1, unpadded convolution: blockIdx.x is (k, c), blockIdx.y one of
// gridDim.y equal parts of the output positions (n, oh, ow), which its threads take in turn, R*S
// sums per thread, then a fixed-order block reduction (deterministic: no atomics). With one part
// the block writes dw; with several, part sums (K*C, parts, R*S) for sum_parts.
template <int R, int S>
__global__ void direct_wgrad(const float* x, const float* dy, float* out, int n, int c, int h,
                             int w, int k, int oh, int ow) {
  const int kk = blockIdx.x / c, cc = blockIdx.x % c;
  float acc[R * S];
#pragma unroll
  for (int i = 0; i < R * S; ++i) acc[i] = 0.f;
  const int plane = oh * ow, positions = n * plane;
  const int per_part = (positions + gridDim.y - 1) / gridDim.y;
  const int first = blockIdx.y * per_part, last = min(positions, first + per_part);
  for (int p = first + threadIdx.x; p < last; p += blockDim.x) {
    const int b = p / plane, q = p % plane, y0 = q / ow, x0 = q % ow;
    const float g = dy[(std::size_t(b) * k + kk) * plane + q];
    const float* xs = x + ((std::size_t(b) * c + cc) * h + y0) * w + x0;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int s = 0; s < S; ++s) acc[r * S + s] = fmaf(g, xs[r * w + s], acc[r * S + s]);
  }
  __shared__ float partial[32][R * S];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int i = 0; i < R * S; ++i) {
    float v = acc[i];
    for (int off = 16; off; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (lane == 0) partial[warp][i] = v;
  }
  __syncthreads();
  if (threadIdx.x < R * S) {
    float v = 0.f;
    for (int j = 0; j < int(blockDim.x >> 5); ++j) v += partial[j][threadIdx.x];
    out[(std::size_t(blockIdx.x) * gridDim.y + blockIdx.y) * R * S + threadIdx.x] = v;
  }
}

// dw[i] = the sum of part sums (K*C, parts, R*S) over the parts, in order.
__global__ void sum_parts(const float* parts, float* dw, int outputs, int count, int rs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= outputs) return;
  const int kc = i / rs, j = i % rs;
  float v = 0.f;
  for (int q = 0; q < count; ++q) v += parts[(std::size_t(kc) * count + q) * rs + j];
  dw[i] = v;
}

// n floats of device memory, freed by DeviceMemory.
struct DeviceArray {
  DeviceMemory memory;
  float* p = nullptr;
  explicit DeviceArray(std::size_t n) {
    void* raw = nullptr;
    SWEEP_CHECK_CUDA(cudaMalloc(&raw, n * sizeof(float)));
    memory.adopt(raw, n * sizeof(float));
    p = static_cast<float*>(raw);
  }
};

template <class F>
float time_us(cudaStream_t stream, int iters, F&& launch) {
  for (int i = 0; i < 20; ++i) launch();
  Event start = make_event(), stop = make_event();
  SWEEP_CHECK_CUDA(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < iters; ++i) launch();
  SWEEP_CHECK_CUDA(cudaEventRecord(stop.get(), stream));
  SWEEP_CHECK_CUDA(cudaEventSynchronize(stop.get()));
  float ms = 0.f;
  SWEEP_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1000.f / float(iters);
}

void run(const char* name, ConvGeom g, int threads, int parts, int iters) {
  Stream stream = make_stream();
  cudnnHandle_t raw = nullptr;
  SWEEP_CHECK_CUDNN(cudnnCreate(&raw));
  CudnnHandle dnn(raw);
  SWEEP_CHECK_CUDNN(cudnnSetStream(dnn.get(), stream.get()));
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  const std::size_t nw = std::size_t(g.k) * g.c * g.r * g.s;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> hx(nx), hy(ny);
  for (float& v : hx) v = normal(rng);
  for (float& v : hy) v = normal(rng) * 0.01f;
  DeviceArray x(nx), dy(ny), dw_cudnn(nw), dw_direct(nw), part_sums(nw * std::size_t(parts));
  SWEEP_CHECK_CUDA(cudaMemcpy(x.p, hx.data(), nx * 4, cudaMemcpyHostToDevice));
  SWEEP_CHECK_CUDA(cudaMemcpy(dy.p, hy.data(), ny * 4, cudaMemcpyHostToDevice));

  ConvPlan plan(dnn.get(), g, MathMode::fp32, std::size_t{256} << 20, ConvPlan::Choose::timed);
  DeviceArray ws(std::max<std::size_t>(plan.workspace_bytes() / 4 + 1, 1));
  const float cudnn_us = time_us(
      stream.get(), iters, [&] { plan.backward_filter(dnn.get(), x.p, dy.p, dw_cudnn.p, ws.p); });
  const float direct_us = time_us(stream.get(), iters, [&] {
    const dim3 grid(unsigned(g.k * g.c), unsigned(parts));
    direct_wgrad<5, 5>
        <<<grid, threads, 0, stream.get()>>>(x.p, dy.p, parts == 1 ? dw_direct.p : part_sums.p, g.n,
                                             g.c, g.h, g.w, g.k, g.out_h, g.out_w);
    SWEEP_CHECK_LAUNCH();
    if (parts > 1) {
      sum_parts<<<unsigned((nw + 255) / 256), 256, 0, stream.get()>>>(part_sums.p, dw_direct.p,
                                                                      int(nw), parts, g.r * g.s);
      SWEEP_CHECK_LAUNCH();
    }
  });
  std::vector<float> a(nw), b(nw);
  SWEEP_CHECK_CUDA(cudaMemcpy(a.data(), dw_cudnn.p, nw * 4, cudaMemcpyDeviceToHost));
  SWEEP_CHECK_CUDA(cudaMemcpy(b.data(), dw_direct.p, nw * 4, cudaMemcpyDeviceToHost));
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < nw; ++i) scale = std::max(scale, double(std::fabs(a[i])));
  for (std::size_t i = 0; i < nw; ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  std::printf(
      "RESULT peer=conv-wgrad shape=%s threads=%d parts=%d cudnn_us=%.2f direct_us=%.2f "
      "max_rel_diff=%.2e\n",
      name, threads, parts, cudnn_us, direct_us, worst / std::max(scale, 1e-30));
  std::fflush(stdout);
}

ConvGeom lenet_conv(int n, int c, int hw, int k) {
  ConvGeom g{};
  g.n = n;
  g.c = c;
  g.h = g.w = hw;
  g.k = k;
  g.r = g.s = 5;
  g.stride_h = g.stride_w = 1;
  g.out_h = g.out_w = hw - 4;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A direct weight-gradient kernel against cuDNN's at LeNet's shapes"};
  int iters = 2000;
  app.add_option("--iters", iters, "timed launches per case");
  CLI11_PARSE(app, argc, argv);
  try {
    for (int threads : {128, 256})
      for (int parts : {1, 4, 16, 64}) {
        run("conv1-b64", lenet_conv(64, 1, 28, 20), threads, parts, iters);
        run("conv2-b64", lenet_conv(64, 20, 12, 50), threads, parts, iters);
        run("conv1-b256", lenet_conv(256, 1, 28, 20), threads, parts, iters);
        run("conv2-b256", lenet_conv(256, 20, 12, 50), threads, parts, iters);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_conv_wgrad: %s\n", e.what());
    return 1;
  }
  return 0;
}
