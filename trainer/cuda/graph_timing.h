/*
 * graph_timing.h — GPU time per call of an op, measured as a training step runs it: `calls`
 * calls back to back in one CUDA graph, replayed. Timing eager calls instead would charge an op
 * its library's host-side work (cuDNN's legacy calls spend about 30 us on the host each, more
 * than LeNet's kernels take on the GPU). Used to choose between kernels (cuda_direct_conv.cu)
 * and by bench_direct_conv.
 */
#pragma once

#include <cuda_runtime.h>

#include "common/check.h"
#include "trainer/cuda/cuda_raii.h"

namespace sweep::trainer::cuda {

// Microseconds per call of `op` on `stream` (which must not be capturing): one untimed replay
// (it uploads the graph), then `replays` timed ones. An op that throws while being captured
// ends the capture, and the exception goes on.
template <class Op>
float graph_time_us(cudaStream_t stream, Op&& op, int calls, int replays) {
  SWEEP_CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < calls; ++i) op();
  } catch (...) {
    cudaGraph_t dropped = nullptr;
    if (cudaStreamEndCapture(stream, &dropped) == cudaSuccess && dropped)
      SWEEP_LOG_ON_ERROR(cudaGraphDestroy(dropped) == cudaSuccess, "cudaGraphDestroy");
    cudaGetLastError();  // an invalidated capture's error, expected here
    throw;
  }
  cudaGraph_t raw_graph = nullptr;
  SWEEP_CHECK_CUDA(cudaStreamEndCapture(stream, &raw_graph));
  Graph graph(raw_graph);
  cudaGraphExec_t raw_exec = nullptr;
  SWEEP_CHECK_CUDA(cudaGraphInstantiate(&raw_exec, graph.get(), 0));
  GraphExec exec(raw_exec);
  SWEEP_CHECK_CUDA(cudaGraphLaunch(exec.get(), stream));
  Event start = make_event(), stop = make_event();
  SWEEP_CHECK_CUDA(cudaEventRecord(start.get(), stream));
  for (int r = 0; r < replays; ++r) SWEEP_CHECK_CUDA(cudaGraphLaunch(exec.get(), stream));
  SWEEP_CHECK_CUDA(cudaEventRecord(stop.get(), stream));
  SWEEP_CHECK_CUDA(cudaEventSynchronize(stop.get()));
  float ms = 0.f;
  SWEEP_CHECK_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms * 1000.f / float(calls * replays);
}

}  // namespace sweep::trainer::cuda
