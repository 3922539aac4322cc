/*
 * graph_timing.h — GPU time per call of an op, measured as a training step runs it: `calls`
 * calls back to back in one CUDA graph, replayed; or, with several branches, as that many steps
 * sharing the GPU run it. Timing eager calls instead would charge an op
 * its library's host-side work (cuDNN's legacy calls spend longer on the host each than small
 * models' kernels take on the GPU). Used to choose between kernels (cuda_direct_conv.cu)
 * and by bench_direct_conv.
 */
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "common/check.h"
#include "trainer/cuda/cuda_raii.h"

namespace sweep::trainer::cuda {

// GPU microseconds per call of `op(stream)`, as `calls` calls back to back in one graph on each of
// the `branches` streams at once (forked from and joined back to `origin`, which must not be
// capturing): one untimed replay (it uploads the graph), then `replays` timed ones; the time is
// divided among all calls. One branch (branches = {origin}): an op's latency in a step. Several:
// its cost when that many steps share the GPU, as a fused array's members do. Every branch runs
// the same op on the same buffers: a timing only, its results are garbage. An op that throws
// while being captured ends the capture, and the exception goes on.
template <class Op>
float graph_time_us(cudaStream_t origin, const std::vector<cudaStream_t>& branches, Op&& op,
                    int calls, int replays) {
  Event fork = make_event(cudaEventDisableTiming), join = make_event(cudaEventDisableTiming);
  SWEEP_CHECK_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  try {
    SWEEP_CHECK_CUDA(cudaEventRecord(fork.get(), origin));
    for (cudaStream_t b : branches) {
      if (b != origin) SWEEP_CHECK_CUDA(cudaStreamWaitEvent(b, fork.get(), 0));
      for (int i = 0; i < calls; ++i) op(b);
      if (b != origin) {
        SWEEP_CHECK_CUDA(cudaEventRecord(join.get(), b));
        SWEEP_CHECK_CUDA(cudaStreamWaitEvent(origin, join.get(), 0));
      }
    }
  } catch (...) {
    cudaGraph_t dropped = nullptr;
    if (cudaStreamEndCapture(origin, &dropped) == cudaSuccess && dropped)
      SWEEP_LOG_ON_ERROR(cudaGraphDestroy(dropped) == cudaSuccess, "cudaGraphDestroy");
    cudaGetLastError();  // an invalidated capture's error, expected here
    throw;
  }
  cudaGraph_t raw_graph = nullptr;
  SWEEP_CHECK_CUDA(cudaStreamEndCapture(origin, &raw_graph));
  Graph graph(raw_graph);
  cudaGraphExec_t raw_exec = nullptr;
  SWEEP_CHECK_CUDA(cudaGraphInstantiate(&raw_exec, graph.get(), 0));
  GraphExec exec(raw_exec);
  SWEEP_CHECK_CUDA(cudaGraphLaunch(exec.get(), origin));
  Event start = make_event(), stop = make_event();
  SWEEP_CHECK_CUDA(cudaEventRecord(start.get(), origin));
  for (int r = 0; r < replays; ++r) SWEEP_CHECK_CUDA(cudaGraphLaunch(exec.get(), origin));
  SWEEP_CHECK_CUDA(cudaEventRecord(stop.get(), origin));
  SWEEP_CHECK_CUDA(cudaEventSynchronize(stop.get()));
  float ms = 0.f;
  SWEEP_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1000.f / float(calls * replays * static_cast<int>(branches.size()));
}

// One branch: `op()` on `stream`.
template <class Op>
float graph_time_us(cudaStream_t stream, Op&& op, int calls, int replays) {
  return graph_time_us(
      stream, std::vector<cudaStream_t>{stream}, [&](cudaStream_t) { op(); }, calls, replays);
}

}  // namespace sweep::trainer::cuda
