/*
 * bench_launch_rate.cu — how many kernels a second the GPU runs when K streams each replay a CUDA
 * graph of a chain of N kernels: the bound a fused array would hit if launches, not the kernels'
 * own work, limited it (bench/RESULTS.md: a LeNet member's step is 28 nodes; 64 members at 1.5M
 * images/s run 0.66M kernels a second, against 5.8M this bench reaches with empty kernels).
 *
 *   bench_launch_rate [--nodes 25] [--rounds 400] [--k 1 4 16 64]
 * Prints `RESULT peer=launch-rate blocks=.. threads=.. iters=.. k=.. kernels_per_second=..` for
 * kernels of 1x32 to 16x256 threads spinning 0 to 1000 multiply-adds each.
 */
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <vector>

#include "common/check.h"
#include "trainer/cuda/cuda_raii.h"

namespace {

using namespace sweep::trainer::cuda;

__global__ void spin(float* p, int iters) {
  float a = p[blockIdx.x * blockDim.x + threadIdx.x];
  for (int i = 0; i < iters; ++i) a = a * 1.0001f + 0.5f;
  if (a == 12345.f) p[0] = a;  // never true: keeps the loop
}

struct Shape {
  int blocks, threads, iters;
};

double kernels_per_second(const Shape& s, int k, int nodes, int rounds, float* buffer) {
  std::vector<Stream> streams;
  std::vector<GraphExec> graphs;
  for (int i = 0; i < k; ++i) {
    streams.push_back(make_stream());
    cudaStream_t st = streams.back().get();
    SWEEP_CHECK_CUDA(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    for (int j = 0; j < nodes; ++j) spin<<<s.blocks, s.threads, 0, st>>>(buffer, s.iters);
    cudaGraph_t raw = nullptr;
    SWEEP_CHECK_CUDA(cudaStreamEndCapture(st, &raw));
    Graph graph(raw);
    cudaGraphExec_t exec = nullptr;
    SWEEP_CHECK_CUDA(cudaGraphInstantiate(&exec, graph.get(), 0));
    graphs.emplace_back(exec);
  }
  const auto round = [&] {
    for (int i = 0; i < k; ++i)
      SWEEP_CHECK_CUDA(cudaGraphLaunch(graphs[i].get(), streams[i].get()));
  };
  for (int r = 0; r < 20; ++r) round();
  SWEEP_CHECK_CUDA(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) round();
  SWEEP_CHECK_CUDA(cudaDeviceSynchronize());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return double(rounds) * k * nodes / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Kernels a second from K streams replaying graphs of N chained kernels"};
  int nodes = 25, rounds = 400;
  std::vector<int> ks{1, 4, 16, 64};
  app.add_option("--nodes", nodes, "kernels in each stream's graph")->check(CLI::Range(1, 1000));
  app.add_option("--rounds", rounds, "timed replays of every stream's graph")
      ->check(CLI::Range(1, 100000));
  app.add_option("--k", ks, "streams")->check(CLI::Range(1, 1024));
  CLI11_PARSE(app, argc, argv);
  try {
    float* buffer = nullptr;
    SWEEP_CHECK_CUDA(cudaMalloc(&buffer, 16 * 256 * sizeof(float)));
    SWEEP_CHECK_CUDA(cudaMemset(buffer, 0, 16 * 256 * sizeof(float)));
    for (const Shape s : {Shape{1, 32, 0}, Shape{8, 256, 0}, Shape{16, 256, 0}, Shape{8, 256, 200},
                          Shape{16, 256, 200}, Shape{8, 256, 1000}})
      for (const int k : ks)
        std::printf(
            "RESULT peer=launch-rate blocks=%d threads=%d iters=%d k=%d kernels_per_second=%.0f\n",
            s.blocks, s.threads, s.iters, k, kernels_per_second(s, k, nodes, rounds, buffer));
    SWEEP_CHECK_CUDA(cudaFree(buffer));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_launch_rate: %s\n", e.what());
    return 1;
  }
  return 0;
}
