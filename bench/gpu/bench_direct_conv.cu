/*
 * bench_direct_conv.cu — our direct and tiled convolution kernels (trainer/cuda/direct_conv.h,
 * tiled_conv.h; tiled: forward and backward data only, for each --groups block shape) against
 * cuDNN's cudnnFind pick (trainer/cuda's ConvPlan, fp32) at LeNet's shapes and a few wider ones:
 * forward, backward data and backward filter, each op's calls back to back in a CUDA graph
 * (GPU microseconds per call), and how far the two agree (max |difference| / max |cuDNN value|).
 * The direct forward includes the bias and the direct filter gradient the bias gradient; cuDNN's
 * figures leave out the launches the backend adds for those.
 *
 *   bench_direct_conv [--iters 200] [--groups 0 4 8] [--split 0 1 4] [--images 0 1 2]
 *                     [--share 8] [--only lenet-conv2-b64]
 * --share S times each op as S steps sharing the GPU run it (a fused array's members: S streams
 * at once, each call's share of the time) with the tiled kernels planned for 1/S of the SMs, as
 * the backend's timed choice does (cuda_direct_conv.cu).
 * Prints `RESULT peer=direct-conv shape=.. op=forward|data|filter cudnn_us=.. direct_us=..
 * max_rel_diff=..` and `RESULT peer=tiled-conv shape=.. op=forward|data groups=.. us=..
 * max_rel_diff=..` (groups: filter groups of 4 per block at most, 0 = as many as fit), and
 * `RESULT peer=scatter-dgrad shape=.. images=.. data_us=..` for scatter_dgrad.h's data gradient
 * (images: at most that many a block, 0 = the plan's).
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
#include "trainer/cuda/direct_conv.h"
#include "trainer/cuda/graph_timing.h"
#include "trainer/cuda/scatter_dgrad.h"
#include "trainer/cuda/tiled_conv.h"

namespace {

using namespace sweep::trainer;
using namespace sweep::trainer::cuda;

// n floats of device memory, freed by DeviceMemory.
struct DeviceArray {
  DeviceMemory memory;
  float* p = nullptr;
  explicit DeviceArray(std::size_t n) {
    void* raw = nullptr;
    SWEEP_CHECK_CUDA(cudaMalloc(&raw, std::max<std::size_t>(n, 1) * sizeof(float)));
    memory.adopt(raw, n * sizeof(float));
    p = static_cast<float*>(raw);
  }
};

// GPU time per call of launch(stream): 5 eager calls first, then `iters` calls in one CUDA graph
// on each branch, replayed 5 times (graph_timing.h). Several branches: the calls of that many
// steps sharing the GPU, each call's share of the time.
template <class F>
float time_us(cudaStream_t stream, const std::vector<cudaStream_t>& branches, int iters,
              F&& launch) {
  for (int i = 0; i < 5; ++i) launch(stream);
  SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream));
  const int calls = branches.size() == 1 ? iters : std::max(2, iters / int(branches.size()));
  return graph_time_us(stream, branches, launch, calls, 5);
}

std::vector<float> host_copy(const DeviceArray& a, std::size_t n) {
  std::vector<float> h(n);
  SWEEP_CHECK_CUDA(cudaMemcpy(h.data(), a.p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

double relative_difference(const std::vector<float>& ref, const std::vector<float>& ours) {
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, double(std::fabs(ref[i])));
    worst = std::max(worst, std::fabs(double(ref[i]) - ours[i]));
  }
  return worst / std::max(scale, 1e-30);
}

struct Options {
  int iters = 200, share = 1;
  std::vector<int> groups{0}, splits{0}, images{0};
};

void run(const std::string& name, const ConvGeom& g, int sm_count, const Options& o) {
  const int iters = o.iters;
  Stream stream = make_stream();
  std::vector<Stream> extra;
  std::vector<cudaStream_t> branches{stream.get()};
  for (int b = 1; b < o.share; ++b) {
    extra.push_back(make_stream());
    branches.push_back(extra.back().get());
  }
  const auto timed = [&](auto&& launch) { return time_us(stream.get(), branches, iters, launch); };
  cudnnHandle_t raw = nullptr;
  SWEEP_CHECK_CUDNN(cudnnCreate(&raw));
  CudnnHandle dnn(raw);
  SWEEP_CHECK_CUDNN(cudnnSetStream(dnn.get(), stream.get()));
  const std::size_t nx = std::size_t(g.n) * g.c * g.h * g.w;
  const std::size_t ny = std::size_t(g.n) * g.k * g.out_h * g.out_w;
  const std::size_t nw = std::size_t(g.k) * g.c * g.r * g.s;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  auto filled = [&](std::size_t n, float scale) {
    std::vector<float> h(n);
    for (float& v : h) v = normal(rng) * scale;
    DeviceArray a(n);
    SWEEP_CHECK_CUDA(cudaMemcpy(a.p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    return a;
  };
  DeviceArray x = filled(nx, 1.f), dy = filled(ny, 0.01f), w = filled(nw, 0.1f);
  DeviceArray y_cudnn(ny), y_direct(ny), dx_cudnn(nx), dx_direct(nx), dw_cudnn(nw), dw_direct(nw),
      db(g.k);
  ConvPlan plan(dnn.get(), g, MathMode::fp32, std::size_t{256} << 20, ConvPlan::Choose::timed);
  DeviceArray ws(plan.workspace_bytes() / sizeof(float) + 1);
  const int parts = direct_conv_filter_parts(g, sm_count);
  DeviceArray scratch(direct_conv_filter_scratch(g, parts));

  auto report = [&](const char* op, float cudnn_us, float direct_us, double diff) {
    std::printf(
        "RESULT peer=direct-conv shape=%s op=%s cudnn_us=%.2f direct_us=%.2f "
        "max_rel_diff=%.2e\n",
        name.c_str(), op, cudnn_us, direct_us, diff);
    std::fflush(stdout);
  };
  // The forward without a bias on both sides, so the outputs compare.
  // cuDNN's calls follow the branch by the handle's stream.
  const auto on = [&](cudaStream_t st) { SWEEP_CHECK_CUDNN(cudnnSetStream(dnn.get(), st)); };
  const float f_cudnn = timed([&](cudaStream_t st) {
    on(st);
    plan.forward(dnn.get(), x.p, w.p, y_cudnn.p, ws.p);
  });
  on(stream.get());
  const float f_direct =
      timed([&](cudaStream_t st) { direct_conv_forward(g, x.p, w.p, nullptr, y_direct.p, st); });
  report("forward", f_cudnn, f_direct,
         relative_difference(host_copy(y_cudnn, ny), host_copy(y_direct, ny)));
  const float d_cudnn = timed([&](cudaStream_t st) {
    on(st);
    plan.backward_data(dnn.get(), w.p, dy.p, dx_cudnn.p, ws.p);
  });
  on(stream.get());
  const float d_direct =
      timed([&](cudaStream_t st) { direct_conv_backward_data(g, w.p, dy.p, dx_direct.p, st); });
  report("data", d_cudnn, d_direct,
         relative_difference(host_copy(dx_cudnn, nx), host_copy(dx_direct, nx)));
  if (tiled_conv_fits(g)) {
    for (int gr : o.groups)
      for (int sp : o.splits)
        for (int im : o.images) {
          tiled_conv_max_groups(gr);
          tiled_conv_max_split(sp);
          tiled_conv_forward_images(im);
          const float f = timed([&](cudaStream_t st) {
            tiled_conv_forward(g, x.p, w.p, nullptr, y_direct.p, sm_count, st);
          });
          const float d = timed([&](cudaStream_t st) {
            tiled_conv_backward_data(g, w.p, dy.p, dx_direct.p, sm_count, st);
          });
          std::printf(
              "RESULT peer=tiled-conv shape=%s share=%d groups=%d split=%d images=%d "
              "forward_us=%.2f (cudnn %.2f) forward_diff=%.2e data_us=%.2f (cudnn %.2f) "
              "data_diff=%.2e\n",
              name.c_str(), o.share, gr, sp, im, f, f_cudnn,
              relative_difference(host_copy(y_cudnn, ny), host_copy(y_direct, ny)), d, d_cudnn,
              relative_difference(host_copy(dx_cudnn, nx), host_copy(dx_direct, nx)));
          std::fflush(stdout);
        }
    tiled_conv_max_groups(0);
    tiled_conv_max_split(0);
    tiled_conv_forward_images(0);
  }
  if (scatter_dgrad_fits(g)) {
    for (int im : o.images) {
      scatter_dgrad_max_images(im);
      const float d =
          timed([&](cudaStream_t st) { scatter_dgrad(g, w.p, dy.p, dx_direct.p, sm_count, st); });
      std::printf(
          "RESULT peer=scatter-dgrad shape=%s share=%d images=%d data_us=%.2f (cudnn %.2f) "
          "data_diff=%.2e\n",
          name.c_str(), o.share, im, d, d_cudnn,
          relative_difference(host_copy(dx_cudnn, nx), host_copy(dx_direct, nx)));
      std::fflush(stdout);
    }
    scatter_dgrad_max_images(0);
  }
  const float w_cudnn = timed([&](cudaStream_t st) {
    on(st);
    plan.backward_filter(dnn.get(), x.p, dy.p, dw_cudnn.p, ws.p);
  });
  on(stream.get());
  const float w_direct = timed([&](cudaStream_t st) {
    direct_conv_backward_filter(g, x.p, dy.p, dw_direct.p, db.p, parts, scratch.p, st);
  });
  report("filter", w_cudnn, w_direct,
         relative_difference(host_copy(dw_cudnn, nw), host_copy(dw_direct, nw)));
  if (tiled_conv_filter_fits(g, sm_count)) {
    for (int gr : o.groups)
      for (int images : o.images) {
        tiled_conv_max_groups(gr);
        tiled_conv_filter_images(images);
        DeviceArray tiled_scratch(tiled_conv_filter_scratch(g, sm_count));
        const float w_tiled = timed([&](cudaStream_t st) {
          tiled_conv_backward_filter(g, x.p, dy.p, dw_direct.p, db.p, sm_count, tiled_scratch.p,
                                     st);
        });
        std::printf(
            "RESULT peer=tiled-conv shape=%s share=%d op=filter groups=%d images=%d us=%.2f "
            "(cudnn %.2f direct %.2f) max_rel_diff=%.2e\n",
            name.c_str(), o.share, gr, images, w_tiled, w_cudnn, w_direct,
            relative_difference(host_copy(dw_cudnn, nw), host_copy(dw_direct, nw)));
        std::fflush(stdout);
      }
    tiled_conv_max_groups(0);
    tiled_conv_filter_images(0);
  }
}

ConvGeom conv(int n, int c, int hw, int k, int r, int pad) {
  ConvGeom g{};
  g.n = n;
  g.c = c;
  g.h = g.w = hw;
  g.k = k;
  g.r = g.s = r;
  g.stride_h = g.stride_w = 1;
  g.pad_h = g.pad_w = pad;
  g.out_h = g.out_w = hw + 2 * pad - r + 1;
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Our direct convolution kernels against cuDNN's picks at small shapes"};
  Options o;
  std::vector<std::string> only;
  app.add_option("--iters", o.iters, "timed launches per case");
  app.add_option("--groups", o.groups, "tiled kernels: filter groups per block at most (0: all)");
  app.add_option("--split", o.splits, "tiled kernels: channel slices per block at most (0: own)");
  app.add_option("--images", o.images, "tiled kernels: images per block (0: the plan's)");
  app.add_option("--share", o.share, "steps sharing the GPU (as a fused array's members)")
      ->check(CLI::Range(1, 64));
  app.add_option("--only", only, "these shapes only (names as printed)");
  CLI11_PARSE(app, argc, argv);
  try {
    int sm_count = 0;
    SWEEP_CHECK_CUDA(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
    sm_count = std::max(1, sm_count / o.share);  // as DeviceSpec::share plans the kernels
    const std::vector<std::pair<std::string, ConvGeom>> shapes{
        {"lenet-conv1-b64", conv(64, 1, 28, 20, 5, 0)},
        {"lenet-conv2-b64", conv(64, 20, 12, 50, 5, 0)},
        {"lenet-conv1-b256", conv(256, 1, 28, 20, 5, 0)},
        {"lenet-conv2-b256", conv(256, 20, 12, 50, 5, 0)},
        {"lenet-conv2-b4096", conv(4096, 20, 12, 50, 5, 0)},
        {"lenet-conv1-b4096", conv(4096, 1, 28, 20, 5, 0)},
        {"3x3-c16-32x32-b64", conv(64, 16, 32, 16, 3, 1)},
        {"3x3-c32-16x16-b128", conv(128, 32, 16, 32, 3, 1)}};
    for (const auto& [name, g] : shapes)
      if (only.empty() || std::find(only.begin(), only.end(), name) != only.end())
        run(name, g, sm_count, o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_direct_conv: %s\n", e.what());
    return 1;
  }
  return 0;
}
