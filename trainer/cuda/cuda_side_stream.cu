/*
 * cuda_side_stream.cu — weight gradients on a second stream, beside the data gradients.
 *
 * In a backward pass the data gradient of a layer is on the critical path (the layer below needs
 * it) while its weight and bias gradients are needed only by the optimizer. At small models'
 * sizes neither of a layer's two gradient products fills the GPU, so running them one after the
 * other leaves most of the GPU idle for both. conv2d_backward and dense_backward therefore queue
 * the weight side on a second stream that first waits for this stream's work so far (an event), and
 * the data side here (a channels-last plan too, where the weight gradient's operands are not
 * converted copies in the shared scratch: activations kept channels-last, or x kept from the
 * forward). The side stream has the lowest priority, so the block scheduler serves the
 * critical path first; captured in a CUDA graph the same calls make a fork and a join, and the
 * graph keeps each node's priority (end_capture), so the recorded step runs the two branches at
 * once with no host involvement.
 *
 * Ordering is kept by two rules: every op outside the backward chain (forward ops, loss,
 * optimizer, copies, capture) first makes this stream wait for all side work, and the backward
 * chain's ops wait only when they read memory the side work writes or write memory it reads or
 * writes (pending_ranges.h: a residual block's ping-pong buffers are rewritten a layer later).
 * The side stream has its own cuDNN and cuBLAS handles, workspaces and scratch, so nothing is
 * shared between work that may run at the same time.
 */
#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"

namespace sweep::trainer::cuda {

void CudaBackend::set_device() const { SWEEP_CHECK_CUDA(cudaSetDevice(device_)); }

void CudaBackend::enter() {
  set_device();
  join_side();
}

void CudaBackend::enter_backward(std::initializer_list<MemoryRange> reads,
                                 std::initializer_list<MemoryRange> writes) {
  set_device();
  if (side_ && side_->pending.conflicts(reads, writes)) join_side();
}

cudaStream_t CudaBackend::joined_stream() {
  enter();
  return stream();
}

CudaBackend::Side* CudaBackend::side_for(bool has_data_gradient) {
  if (!overlap_ || !has_data_gradient) return nullptr;
  if (!side_) {
    require_not_capturing("creating the weight-gradient stream");
    auto side = std::make_unique<Side>();
    side->stream = make_stream(Priority::lowest);
    make_handles(side->stream.get(), side->cublas, side->cublas_workspace, side->cudnn);
    side->fork = make_event(cudaEventDisableTiming);
    side->join = make_event(cudaEventDisableTiming);
    side_ = std::move(side);
  }
  return side_.get();
}

void CudaBackend::fork_side(Side& side, std::initializer_list<MemoryRange> reads,
                            std::initializer_list<MemoryRange> writes) {
  SWEEP_CHECK_CUDA(cudaEventRecord(side.fork.get(), stream()));
  SWEEP_CHECK_CUDA(cudaStreamWaitEvent(side.stream.get(), side.fork.get(), 0));
  side.pending.add(reads, writes);
}

void CudaBackend::join_side() {
  if (!side_ || side_->pending.empty()) return;
  // Cleared first: should the calls below fail, the error is thrown once, not on every later op.
  side_->pending.clear();
  SWEEP_CHECK_CUDA(cudaEventRecord(side_->join.get(), side_->stream.get()));
  SWEEP_CHECK_CUDA(cudaStreamWaitEvent(stream(), side_->join.get(), 0));
}

}  // namespace sweep::trainer::cuda
