/*
 * bench_gpu_multigraph.cpp — how K LeNet steps on one GPU are best launched: the question behind
 * a fused array's plateau (bench/RESULTS.md, fused arrays).
 *
 * K members, each a CudaBackend with its own network, optimizer, stream and recorded step (as a
 * fused array's members), on synthetic device data. Three ways to run a round of K steps:
 *   streams   each member replays its own graph on its own stream (what train_array does);
 *   one-graph one graph holding the K members' steps as independent child graphs, launched once
 *             per round (CudaBackend::stage_replay + captured_graph);
 *   threads   as streams, with the members' launches spread over T host threads.
 * Summed images/s over timed rounds after a warm-up, median of repeats.
 *
 *   bench_gpu_multigraph [--k 1 8 16 64] [--batch 64] [--rounds 200] [--repeats 3] [--threads 4]
 *                        [--math fp32|tf32] [--deterministic] [--cudnn-only]
 *                        [--modes streams one-graph threads]
 * Prints the nodes of one member's recorded step, then
 * `RESULT peer=sweep-multigraph mode=.. k=.. batch=.. images_per_second=..` lines.
 */
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
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
using Clock = std::chrono::steady_clock;

constexpr int kRows = 8192;  // images in each member's synthetic data set
const Shape kInput{1, 28, 28};

// One LeNet trial's device state with its step recorded in a graph.
struct Member {
  CudaBackend gpu;
  Network net;
  Optimizer opt;
  bench::SyntheticSet set;
  DeviceBuffer x, y, dl, stats;
  int batch, batches;
  std::int64_t step = 0;
  OptimizerStep args;

  static TrainingSpec spec(int i) {
    TrainingSpec t = test::lenet_training();
    t.learning_rate = 0.001 * (1 + i % 8);  // members differ in their rate
    return t;
  }

  Member(int i, int batch_size, MathMode math, bool deterministic, CudaBackend::DirectConv direct)
      : gpu(0, math, deterministic),
        net(gpu, test::lenet_model(), kInput, 10, batch_size, 1 + i),
        opt(gpu, spec(i), net.param_count()),
        batch(batch_size),
        batches(kRows / batch_size) {
    gpu.set_direct_conv(direct);
    set = bench::make_synthetic_set(gpu, kInput, kRows, std::uint32_t(3 + i));
    const std::size_t sample = std::size_t(kInput.numel());
    x = DeviceBuffer(gpu, sample * batch * 4);
    y = DeviceBuffer(gpu, std::size_t(batch) * 4);
    dl = DeviceBuffer(gpu, std::size_t(batch) * 10 * 4);
    stats = DeviceBuffer(gpu, 16);
    args.lr = static_cast<float>(spec(i).learning_rate);
    for (int w = 0; w < 3; ++w) run_step(set.order.as<std::int32_t>() + (step++ % batches) * batch);
    gpu.begin_capture();
    run_step(set.order.as<std::int32_t>());  // captured pointer: replays offset from row 0
    gpu.end_capture();
    gpu.synchronize();
  }

  void run_step(const std::int32_t* indices) {
    GatherDesc d{};
    d.batch = batch;
    d.c = kInput.c;
    d.h = kInput.h;
    d.w = kInput.w;
    d.images = set.images.as<std::uint8_t>();
    d.labels = set.labels.as<std::uint8_t>();
    d.indices = indices;
    d.scale = set.scale();
    d.shift = set.shift(kInput.c);
    d.seed = 1;
    d.step = std::uint64_t(step);
    gpu.gather_batch(d, x.f(), y.as<std::int32_t>());
    const float* logits = net.forward(x.f(), batch, true);
    gpu.softmax_cross_entropy(logits, y.as<std::int32_t>(), batch, 10, dl.f(), stats.as<double>());
    net.backward(dl.f(), batch);
    opt.step(net.params(), net.grads(), args.lr);
  }

  std::int64_t next_offset() { return (step++ % batches) * batch; }
  void replay() { gpu.replay(args, std::uint64_t(step), next_offset()); }
  void check_finite() {
    double s[2];
    gpu.copy_to_host(s, stats.as<void>(), sizeof s);
    if (!(s[0] == s[0])) throw sweep::Error("the loss became NaN");
  }
};

// The K members' recorded steps as one graph of independent children.
struct OneGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  explicit OneGraph(std::vector<std::unique_ptr<Member>>& members) {
    SWEEP_CHECK_CUDA(cudaGraphCreate(&graph, 0));
    for (auto& m : members) {
      cudaGraphNode_t node;
      SWEEP_CHECK_CUDA(
          cudaGraphAddChildGraphNode(&node, graph, nullptr, 0, m->gpu.captured_graph()));
    }
    SWEEP_CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  }
  ~OneGraph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
  OneGraph(const OneGraph&) = delete;
  OneGraph& operator=(const OneGraph&) = delete;
};

enum class Mode { streams, one_graph, threads };

double run(std::vector<std::unique_ptr<Member>>& members, Mode mode, int rounds, int repeats,
           int threads) {
  const int k = static_cast<int>(members.size());
  std::unique_ptr<OneGraph> one;
  if (mode == Mode::one_graph) one = std::make_unique<OneGraph>(members);
  cudaStream_t launch_stream = members[0]->gpu.joined_stream();
  auto round = [&] {
    if (mode == Mode::one_graph) {
      std::vector<cudaEvent_t> done(members.size());
      for (std::size_t i = 0; i < members.size(); ++i) {
        Member& m = *members[i];
        done[i] = m.gpu.stage_replay(m.args, std::uint64_t(m.step), m.next_offset());
      }
      SWEEP_CHECK_CUDA(cudaGraphLaunch(one->exec, launch_stream));
      for (cudaEvent_t e : done) SWEEP_CHECK_CUDA(cudaEventRecord(e, launch_stream));
    } else {
      for (auto& m : members) m->replay();
    }
  };
  auto run_rounds = [&](int n) {
    if (mode == Mode::threads) {
      std::vector<std::thread> pool;
      const int t = std::min(threads, k);
      for (int j = 0; j < t; ++j)
        pool.emplace_back([&, j] {
          for (int r = 0; r < n; ++r)
            for (int i = j; i < k; i += t) members[std::size_t(i)]->replay();
        });
      for (auto& th : pool) th.join();
    } else {
      for (int r = 0; r < n; ++r) round();
    }
    for (auto& m : members) m->gpu.synchronize();
  };
  run_rounds(20);
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    run_rounds(rounds);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rates.push_back(double(rounds) * k * members[0]->batch / s);
  }
  for (auto& m : members) m->check_finite();
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"K LeNet steps on one GPU: own streams vs one graph vs several host threads"};
  std::vector<int> ks = {1, 8, 16, 64};
  int batch = 64, rounds = 200, repeats = 3, threads = 4;
  std::string math_word = "fp32";
  bool deterministic = false;
  std::vector<std::string> modes = {"streams", "one-graph", "threads"};
  app.add_option("--k", ks, "member counts");
  app.add_option("--batch", batch, "batch size");
  app.add_option("--rounds", rounds, "timed rounds per repeat");
  app.add_option("--repeats", repeats, "repeats; the median is reported");
  app.add_option("--threads", threads, "host threads for mode threads");
  app.add_option("--math", math_word, "fp32 or tf32")->check(CLI::IsMember({"fp32", "tf32"}));
  app.add_flag("--deterministic", deterministic, "deterministic, untimed convolution algorithms");
  bool cudnn_only = false;
  app.add_flag("--cudnn-only", cudnn_only, "no direct convolution kernels of ours");
  app.add_option("--modes", modes, "streams, one-graph, threads")
      ->check(CLI::IsMember({"streams", "one-graph", "threads"}));
  CLI11_PARSE(app, argc, argv);
  const MathMode math = math_word == "tf32" ? MathMode::tf32 : MathMode::fp32;
  try {
    for (int k : ks) {
      std::vector<std::unique_ptr<Member>> members;
      for (int i = 0; i < k; ++i)
        members.push_back(std::make_unique<Member>(
            i, batch, math, deterministic,
            cudnn_only ? CudaBackend::DirectConv::never : CudaBackend::DirectConv::timed));
      std::size_t nodes = 0;
      SWEEP_CHECK_CUDA(cudaGraphGetNodes(members[0]->gpu.captured_graph(), nullptr, &nodes));
      std::printf("graph nodes per member step: %zu\n", nodes);
      for (auto [mode, name] :
           {std::pair{Mode::streams, "streams"}, std::pair{Mode::one_graph, "one-graph"},
            std::pair{Mode::threads, "threads"}}) {
        if (std::find(modes.begin(), modes.end(), name) == modes.end()) continue;
        const double ips = run(members, mode, rounds, repeats, threads);
        std::printf(
            "RESULT peer=sweep-multigraph mode=%s k=%d batch=%d math=%s deterministic=%d "
            "cudnn_only=%d images_per_second=%.0f\n",
            name, k, batch, math_word.c_str(), int(deterministic), int(cudnn_only), ips);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gpu_multigraph: %s\n", e.what());
    return 1;
  }
  return 0;
}
