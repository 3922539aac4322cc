/*
 * bench_gpu_lenet.cpp — training-step throughput (images/s) of the CUDA backend: LeNet at batch
 * 64 and 256, the MATLAB CIFAR-10 conv-block net (convnet, width 32, depth 4) at batch 256, and
 * the CIFAR variant of ResNet-18 (preset resnet, depth 18: 3x3 stem, no max-pool) at batch 128.
 *
 * A step is what a sweep trial pays: gather + normalise from a uint8 data set on the device by a
 * shuffled index array, forward, softmax cross-entropy, backward, the fused SGD-momentum update
 * (lr 0.01, momentum 0.9, weight decay 5e-4, through trainer/optim's Optimizer). Timed with CUDA
 * events around a fixed number of steps after a warm-up, median of several repeats. Two modes:
 * eager (one launch per op) and graph (the step captured once with CudaBackend::begin_capture and
 * replayed, the batch offset and step read from the device block). train() itself replays its
 * full batches the same way; bench_gpu_train times that, which is what a user gets.
 *
 *   bench_gpu_lenet [--iters 500] [--warmup 50] [--repeats 5] [--only lenet|convnet|resnet18]
 *                   [--batch 64|256] [--mode eager|graph] [--direct-conv
 * timed|never|always|scatter]
 *                   [--overlap on|off] [--share N] [--nhwc-activations on|off]
 * --overlap off runs the weight gradients on the one stream too (CudaBackend::
 * set_overlap_weight_gradients), for the figure without the side stream. --share N plans and
 * times the kernels as a fused array of N members does (CudaBackend::set_gpu_share), so a
 * profiler can see that array's kernels one step at a time. --nhwc-activations off keeps every
 * activation in fp32 NCHW in bf16 and tf32 mode (CudaBackend::set_nhwc_activations), the path
 * before channels-last tensors were kept between layers.
 * Prints a table and `RESULT peer=sweep model=.. batch=.. mode=.. precision=..
 * images_per_second=..`
 */
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/gpu/synthetic_set.h"
#include "common/check.h"
#include "tests/trainer/lenet_config.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/network.h"
#include "trainer/optim/optimizer.h"

namespace {

using namespace sweep::trainer;
using sweep::trainer::cuda::CudaBackend;
using sweep::trainer::cuda::MathMode;

struct Case {
  std::string model;  // lenet | convnet | resnet18
  int batch;
  bool graph;
  MathMode math;
};

constexpr int kRows = 16384;  // images in the synthetic device data set

double run_case(const Case& c, int warmup, int iters, int repeats, CudaBackend::DirectConv direct,
                bool overlap, int share, bool nhwc_activations) {
  CudaBackend gpu(0, c.math);
  gpu.set_nhwc_activations(nhwc_activations);
  gpu.set_direct_conv(direct);
  gpu.set_gpu_share(share);
  gpu.set_overlap_weight_gradients(overlap);
  const bool lenet = c.model == "lenet";
  const Shape in = lenet ? Shape{1, 28, 28} : Shape{3, 32, 32};
  ModelSpec model = test::lenet_model();
  if (!lenet) model.preset = sweep::trainer::Preset::convnet;
  if (c.model == "convnet") {
    model.net_width = 32;
    model.block_depth = 4;
  } else if (c.model == "resnet18") {
    model.preset = sweep::trainer::Preset::resnet;
    model.depth = 18;
    model.width = 1;
  }
  Network net(gpu, model, in, 10, c.batch, 1);
  const TrainingSpec spec = test::lenet_training();  // every model here trains by LeNet's recipe
  Optimizer opt(gpu, spec, net.param_count());

  const bench::SyntheticSet set = bench::make_synthetic_set(gpu, in, kRows, 3);
  const std::size_t sample = std::size_t(in.numel());
  DeviceBuffer x(gpu, sample * c.batch * 4), y(gpu, std::size_t(c.batch) * 4);
  DeviceBuffer dl(gpu, std::size_t(c.batch) * 10 * 4), stats(gpu, 16);
  const int batches = kRows / c.batch;

  GatherDesc d{};
  d.batch = c.batch;
  d.c = in.c;
  d.h = in.h;
  d.w = in.w;
  d.images = set.images.as<std::uint8_t>();
  d.labels = set.labels.as<std::uint8_t>();
  d.scale = set.scale();
  d.shift = set.shift(in.c);
  d.seed = 1;
  // One training step on the batch `d` names: gather, forward, loss, backward, update.
  auto train_step = [&] {
    gpu.gather_batch(d, x.f(), y.as<std::int32_t>());
    const float* logits = net.forward(x.f(), c.batch, true);
    gpu.softmax_cross_entropy(logits, y.as<std::int32_t>(), c.batch, 10, dl.f(),
                              stats.as<double>());
    net.backward(dl.f(), c.batch);
    opt.step(net.params(), net.grads(), 0.01);
  };
  auto step = [&](std::int64_t i) {
    d.indices = set.order.as<std::int32_t>() + (i % batches) * c.batch;
    d.step = std::uint64_t(i);
    train_step();
  };
  OptimizerStep replay_args;  // sgdm: only lr matters in the replayed update
  replay_args.lr = 0.01f;
  auto replayed = [&](std::int64_t i) {
    gpu.replay(replay_args, std::uint64_t(i), (i % batches) * c.batch);
  };

  std::int64_t it = 0;
  for (int w = 0; w < warmup; ++w) step(it++);
  if (c.graph) {
    d.indices = set.order.as<std::int32_t>();  // captured pointer: offsets are relative to row 0
    gpu.begin_capture();
    d.step = 0;
    train_step();
    gpu.end_capture();
    for (int w = 0; w < warmup; ++w) replayed(it++);
  }
  gpu.synchronize();

  auto start = cuda::make_event(), stop = cuda::make_event();
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    SWEEP_CHECK_CUDA(cudaEventRecord(start.get(), gpu.joined_stream()));
    for (int i = 0; i < iters; ++i) c.graph ? replayed(it++) : step(it++);
    SWEEP_CHECK_CUDA(cudaEventRecord(stop.get(), gpu.joined_stream()));
    SWEEP_CHECK_CUDA(cudaEventSynchronize(stop.get()));
    float ms = 0;
    SWEEP_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    rates.push_back(double(iters) * c.batch / (ms / 1000.0));
  }
  double loss[2];
  gpu.copy_to_host(loss, stats.as<void>(), sizeof loss);
  if (!(loss[0] == loss[0])) throw sweep::Error("bench: the loss became NaN");
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CUDA backend training-step throughput"};
  int iters = 500, warmup = 50, repeats = 5;
  std::string only, mode_only, prec_only;
  int batch_only = 0;
  app.add_option("--iters", iters, "timed steps per repeat");
  app.add_option("--warmup", warmup, "untimed steps first (and replays, in graph mode)");
  app.add_option("--repeats", repeats, "repeats; the median is reported");
  app.add_option("--only", only, "lenet, convnet or resnet18");
  app.add_option("--batch", batch_only, "only this LeNet batch size");
  app.add_option("--mode", mode_only, "eager or graph only");
  app.add_option("--precision", prec_only, "fp32, tf32 or bf16 only");
  std::string direct_word = "timed";
  app.add_option("--direct-conv", direct_word,
                 "timed (ours where faster than cuDNN), never (cuDNN only), always (the direct "
                 "kernels), or scatter (tiled, the data gradient scattered: what a fused LeNet "
                 "array's timed choice takes, fixed, for a profiler whose timing would skew it)")
      ->check(CLI::IsMember({"timed", "never", "always", "scatter"}));
  std::string overlap_word = "on";
  app.add_option("--overlap", overlap_word,
                 "on: weight gradients on a second stream beside the data gradients; off: one "
                 "stream")
      ->check(CLI::IsMember({"on", "off"}));
  int share = 1;
  app.add_option("--share", share,
                 "plan and time the kernels as one of this many steps sharing the GPU (a fused "
                 "array's DeviceSpec::share); the step itself still runs alone")
      ->check(CLI::Range(1, 64));
  std::string nhwc_activations = "on";
  app.add_option("--nhwc-activations", nhwc_activations,
                 "on: bf16 and tf32 mode keep channels-last activations (bf16 or fp32 NHWC) "
                 "between the layers that take them; off: fp32 NCHW activations, converted around "
                 "each channels-last convolution")
      ->check(CLI::IsMember({"on", "off"}));
  CLI11_PARSE(app, argc, argv);
  const CudaBackend::DirectConv direct = direct_word == "never"    ? CudaBackend::DirectConv::never
                                         : direct_word == "always" ? CudaBackend::DirectConv::always
                                         : direct_word == "scatter"
                                             ? CudaBackend::DirectConv::scatter
                                             : CudaBackend::DirectConv::timed;

  std::vector<Case> cases;
  if (only.empty() || only == "lenet")
    for (int b : {64, 256})
      for (MathMode m : {MathMode::fp32, MathMode::bf16})
        for (bool g : {false, true}) cases.push_back({"lenet", b, g, m});
  if (only.empty() || only == "convnet")
    for (MathMode m : {MathMode::fp32, MathMode::tf32, MathMode::bf16})
      for (bool g : {false, true}) cases.push_back({"convnet", 256, g, m});
  if (only.empty() || only == "resnet18")
    for (MathMode m : {MathMode::fp32, MathMode::tf32, MathMode::bf16})
      for (bool g : {false, true}) cases.push_back({"resnet18", 128, g, m});

  const auto prec_name = [](MathMode m) {
    return m == MathMode::tf32 ? "tf32" : m == MathMode::bf16 ? "bf16" : "fp32";
  };
  std::erase_if(cases, [&](const Case& c) {
    return (batch_only && c.model == "lenet" && c.batch != batch_only) ||
           (!prec_only.empty() && prec_name(c.math) != prec_only) ||
           (!mode_only.empty() && (c.graph ? "graph" : "eager") != mode_only);
  });
  try {
    std::printf("%-8s %-6s %-6s %-6s %12s\n", "model", "batch", "mode", "prec", "images/s");
    for (const Case& c : cases) {
      const int n = c.model == "lenet" ? iters : std::max(50, iters / 5);
      const double rate = run_case(c, warmup, n, repeats, direct, overlap_word == "on", share,
                                   nhwc_activations == "on");
      const char* mode = c.graph ? "graph" : "eager";
      const char* prec = prec_name(c.math);
      std::printf("%-8s %-6d %-6s %-6s %12.0f\n", c.model.c_str(), c.batch, mode, prec, rate);
      std::printf(
          "RESULT peer=sweep model=%s batch=%d mode=%s precision=%s direct_conv=%s overlap=%s "
          "nhwc_activations=%s images_per_second=%.0f\n",
          c.model.c_str(), c.batch, mode, prec, direct_word.c_str(), overlap_word.c_str(),
          nhwc_activations.c_str(), rate);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_lenet: %s\n", e.what());
    return 1;
  }
  return 0;
}
