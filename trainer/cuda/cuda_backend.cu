/*
 * cuda_backend.cu — construction, memory, copies and CUDA-graph capture of the CUDA backend.
 *
 * allocate() zeroes what it hands out (asynchronously, on the stream), as the CPU backend does, so
 * optimizer state and statistics start at zero on both. Every allocation is tracked and whatever a
 * caller forgot is freed by the destructor: a finished trial returns every byte. A failed
 * cudaMalloc is cleared (cudaGetLastError) before throwing OutOfMemory, so the backend stays
 * usable and the next trial is not poisoned by a sticky error.
 */
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/check.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/optim/adam_factors.h"

namespace sweep::trainer::cuda {

namespace {

constexpr std::size_t kCublasWorkspace = std::size_t{32} << 20;  // cuBLAS' advice for Hopper
constexpr std::size_t kWorkspaceLimit = std::size_t{256} << 20;  // cuDNN algorithm workspace cap

// The captured step's first node: take this replay's slot of the pinned ring.
__global__ void load_step_kernel(const StepScalars* ring /* (ring_size), mapped host */,
                                 int ring_size, std::uint64_t* counter /* (1) */,
                                 StepScalars* block /* (1) */) {
  const std::uint64_t k = *counter;
  *block = ring[k % ring_size];
  *counter = k + 1;
}

// The evaluation graph's first node: this replay's offset, from the pass's sequence.
__global__ void load_eval_kernel(std::int64_t* sequence /* (2): next, step */,
                                 StepScalars* block /* (1) */) {
  const std::int64_t next = sequence[0];
  *block = StepScalars{};
  block->index_delta = next;
  block->label_delta = next;
  sequence[0] = next + sequence[1];
}

// Starts a pass's sequence (kernel arguments are copied at launch: nothing for the host to keep).
__global__ void start_eval_kernel(std::int64_t* sequence, std::int64_t first, std::int64_t step) {
  sequence[0] = first;
  sequence[1] = step;
}

std::string device_label(int device) {
  cudaDeviceProp prop{};
  SWEEP_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  return "cuda:" + std::to_string(device) + " (" + prop.name + ")";
}

}  // namespace

CudaBackend::CudaBackend(int device, MathMode math, bool deterministic)
    : device_(device),
      math_(math),
      deterministic_(deterministic),
      workspace_limit_(kWorkspaceLimit) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    count = 0;
  }
  if (device < 0 || device >= count)
    throw Error("cuda device " + std::to_string(device) + " does not exist (" +
                std::to_string(count) + " visible)");
  set_device();
  name_ = device_label(device) +
          (math == MathMode::tf32   ? " tf32"
           : math == MathMode::bf16 ? " bf16"
                                    : "") +
          (deterministic ? " deterministic" : "");
  // The highest priority: the weight-gradient side stream (cuda_side_stream.cu) has the lowest,
  // so the step's critical path is scheduled first.
  stream_ = make_stream(Priority::highest);
  make_handles(stream_.get(), cublas_, cublas_workspace_, cudnn_);
  void* p = nullptr;
  SWEEP_CHECK_CUDA(cudaMalloc(&p, kSumSquaresBlocks * sizeof(double)));
  sumsq_partial_.adopt(p, kSumSquaresBlocks * sizeof(double));
}

void CudaBackend::make_handles(cudaStream_t s, CublasHandle& blas, DeviceMemory& blas_workspace,
                               CudnnHandle& dnn) {
  blas = make_cublas();
  SWEEP_CHECK_CUBLAS(cublasSetStream(blas.get(), s));
  SWEEP_CHECK_CUBLAS(cublasSetMathMode(
      blas.get(), math_ == MathMode::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  // Our own cuBLAS workspace: no hidden allocation later, and capture-safe.
  void* p = grow(blas_workspace, kCublasWorkspace, "cuBLAS workspace");
  SWEEP_CHECK_CUBLAS(cublasSetWorkspace(blas.get(), p, kCublasWorkspace));
  target_sm_share(blas.get());
  dnn = make_cudnn();
  SWEEP_CHECK_CUDNN_HANDLE(cudnnSetStream(dnn.get(), s));
}

void CudaBackend::set_gpu_share(int share) {
  share_ = share < 1 ? 1 : share;
  target_sm_share(cublas_.get());
  if (side_) target_sm_share(side_->cublas.get());
}

// cuBLAS's heuristics for 1/share of the SMs (0: all of them). With the whole GPU in view they
// take small tiles for small products (LeNet's 800 -> 500 layer at batch 64) and split them over
// more blocks, which steps sharing the GPU pay for without gaining. Not when deterministic: a
// fused member then computes its lone run's bits, so cuBLAS must pick the kernels it picks alone,
// with all SMs in view (a quarter, as our deterministic convolutions plan, cost the lone run more
// than it gave a fused array: bench/RESULTS.md).
void CudaBackend::target_sm_share(cublasHandle_t blas) const {
  const int sms = share_ > 1 && !deterministic_ ? shared_sm_count() : 0;
  SWEEP_CHECK_CUBLAS(cublasSetSmCountTarget(blas, sms));
}

int CudaBackend::device_sm_count() const {
  int sms = 0;
  SWEEP_CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
  return sms;
}

int CudaBackend::shared_sm_count() const { return std::max(1, device_sm_count() / share_); }

int CudaBackend::deterministic_order_sms() const {
  return std::max(1, device_sm_count() / kDeterministicShare);
}

CudaBackend::~CudaBackend() {
  SWEEP_LOG_ON_ERROR(cudaSetDevice(device_) == cudaSuccess, "cudaSetDevice");
  SWEEP_LOG_ON_ERROR(cudaStreamSynchronize(stream_.get()) == cudaSuccess, "cudaStreamSynchronize");
  if (side_)
    SWEEP_LOG_ON_ERROR(cudaStreamSynchronize(side_->stream.get()) == cudaSuccess,
                       "cudaStreamSynchronize");
  for (void* p : live_) SWEEP_LOG_ON_ERROR(cudaFree(p) == cudaSuccess, "cudaFree");
  live_.clear();
  // Members go in reverse order: graph, ring, buffers, plans, then the handles and the stream.
}

void CudaBackend::require_not_capturing(const char* what) const {
  if (capturing_)
    throw Error(std::string("cuda: ") + what +
                " during CUDA-graph capture; run one eager step with the same shapes first");
}

// ---------------------------------------------------------------------------------- memory

void* CudaBackend::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  enter();
  require_not_capturing("allocation");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear it: the backend stays usable
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
      cudaGetLastError();
      free_bytes = 0;
    }
    throw OutOfMemory("cuda:" + std::to_string(device_), bytes, free_bytes);
  }
  SWEEP_CHECK_CUDA(e);
  live_.insert(p);
  SWEEP_CHECK_CUDA(cudaMemsetAsync(p, 0, bytes, stream_.get()));
  return p;
}

void CudaBackend::deallocate(void* p) noexcept {
  if (!p) return;
  SWEEP_LOG_ON_ERROR(cudaSetDevice(device_) == cudaSuccess, "cudaSetDevice");
  if (live_.erase(p) == 0) {
    std::fprintf(stderr, "sweep: cuda deallocate of a pointer this backend did not allocate\n");
    return;
  }
  SWEEP_LOG_ON_ERROR(cudaFree(p) == cudaSuccess, "cudaFree");
}

void CudaBackend::copy_to_device(void* dst, const void* host_src, std::size_t bytes) {
  if (!bytes) return;
  enter();
  // From pageable memory the call returns once the source has been staged, so the caller may
  // reuse host_src at once; the device side stays ordered on the stream.
  SWEEP_CHECK_CUDA(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_.get()));
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (!bytes) return;
  enter();
  require_not_capturing("copy_to_host");
  SWEEP_CHECK_CUDA(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
}

void CudaBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (!bytes || dst == src) return;
  enter();
  SWEEP_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.get()));
}

void CudaBackend::synchronize() {
  enter();
  require_not_capturing("synchronize");
  SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
}

void* CudaBackend::conv_workspace(std::size_t bytes) {
  return grow(conv_workspace_, bytes, "convolution workspace");
}

void* CudaBackend::grow(DeviceMemory& m, std::size_t bytes, const char* what) {
  if (bytes <= m.bytes()) return m.get();
  require_not_capturing((std::string("growing the ") + what).c_str());
  if (m.get()) {
    // The old buffer may still be in use by queued work, the side stream's included: wait before
    // freeing it. Growing from nothing waits for nothing: a fused array's members meet their first
    // shape that needs a workspace in the middle of a round (a smaller last batch, a validation's),
    // and waiting there for each member's queued work would run their validations one after
    // another.
    join_side();
    SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
    retire(m);
  }
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) cudaGetLastError();
    throw OutOfMemory("cuda:" + std::to_string(device_) + " (" + what + ")", bytes, free_bytes);
  }
  SWEEP_CHECK_CUDA(e);
  m.adopt(p, bytes);
  return p;
}

void CudaBackend::retire(DeviceMemory& m) {
  if (step_graph_ || eval_graph_)
    graph_owned_.push_back(std::move(m));
  else
    m.reset();
}

// ---------------------------------------------------------------------------------- capture

// Both graphs write the device block the captured ops read: the step's from its slot of the pinned
// ring (the host writes each step's lr, t and offsets there), the evaluation's from a sequence on
// the device (a pass's offsets are known in advance, so the host never waits for a ring slot and
// queues a whole pass at once). Replays run in host order on the one stream.
void CudaBackend::begin_capture_into(Recorded& r, bool evaluation) {
  enter();
  require_not_capturing("begin_capture");
  drop(r);
  if (!step_block_.get()) {
    void* p = nullptr;
    SWEEP_CHECK_CUDA(cudaMalloc(&p, sizeof(StepScalars)));
    step_block_.adopt(p, sizeof(StepScalars));
    SWEEP_CHECK_CUDA(cudaMalloc(&p, sizeof(std::uint64_t)));
    step_counter_.adopt(p, sizeof(std::uint64_t));
    step_ring_ = PinnedMemory(kRing * sizeof(StepScalars));
    std::memset(step_ring_.as<StepScalars>(), 0, kRing * sizeof(StepScalars));
    for (int k = 0; k < kRing; ++k) ring_done_.push_back(make_event(cudaEventDisableTiming));
  }
  if (evaluation && !eval_sequence_.get()) {
    void* p = nullptr;
    SWEEP_CHECK_CUDA(cudaMalloc(&p, 2 * sizeof(std::int64_t)));
    eval_sequence_.adopt(p, 2 * sizeof(std::int64_t));
    SWEEP_CHECK_CUDA(cudaMemsetAsync(p, 0, 2 * sizeof(std::int64_t), stream_.get()));
  }
  // Nothing is in flight after this, so the device counter and the host's count restart together.
  SWEEP_CHECK_CUDA(cudaMemsetAsync(step_counter_.get(), 0, sizeof(std::uint64_t), stream_.get()));
  SWEEP_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
  host_replays_ = 0;
  SWEEP_CHECK_CUDA(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  capture_into_ = &r;
  if (evaluation)
    load_eval_kernel<<<1, 1, 0, stream_.get()>>>(eval_sequence_.as<std::int64_t>(),
                                                 step_block_.as<StepScalars>());
  else
    load_step_kernel<<<1, 1, 0, stream_.get()>>>(step_ring_.as<StepScalars>(), kRing,
                                                 step_counter_.as<std::uint64_t>(),
                                                 step_block_.as<StepScalars>());
  SWEEP_CHECK_LAUNCH();
}

void CudaBackend::begin_capture() { begin_capture_into(step_graph_, false); }

void CudaBackend::begin_evaluation_capture(std::uint64_t key) {
  begin_capture_into(eval_graph_, true);
  eval_key_ = key;
}

void CudaBackend::end_capture() {
  enter();
  if (!capturing_) throw Error("cuda: end_capture without begin_capture");
  Recorded& r = *capture_into_;
  capturing_ = false;
  capture_into_ = nullptr;
  cudaGraph_t g = nullptr;
  SWEEP_CHECK_CUDA(cudaStreamEndCapture(stream_.get(), &g));
  r.graph = Graph(g);
  cudaGraphExec_t exec = nullptr;
  // Each kernel node keeps the priority of the stream it was captured on (the main stream's
  // highest, the weight-gradient side stream's lowest: cuda_side_stream.cu). Without this flag a
  // replay runs every node at its launch stream's priority, and the side branch's blocks compete
  // with the critical path's.
  SWEEP_CHECK_CUDA(
      cudaGraphInstantiateWithFlags(&exec, g, cudaGraphInstantiateFlagUseNodePriority));
  r.exec = GraphExec(exec);
}

void CudaBackend::drop(Recorded& r) noexcept {
  SWEEP_LOG_ON_ERROR(cudaSetDevice(device_) == cudaSuccess, "cudaSetDevice");
  if (capturing_ && capture_into_ == &r) {
    // An op threw between begin_capture and end_capture. Ending the capture returns the stream to
    // eager mode; an invalidated capture reports an error here, which is expected and cleared.
    capturing_ = false;
    capture_into_ = nullptr;
    if (side_ && !side_->pending.empty()) {
      // The side stream joined the capture at its fork: join it back, or the capture cannot end
      // and the side stream would stay in capture mode. Errors (an invalidated capture) are
      // expected here and cleared below.
      side_->pending.clear();
      if (cudaEventRecord(side_->join.get(), side_->stream.get()) == cudaSuccess)
        cudaStreamWaitEvent(stream_.get(), side_->join.get(), 0);
    }
    cudaGraph_t g = nullptr;
    if (cudaStreamEndCapture(stream_.get(), &g) != cudaSuccess) g = nullptr;
    if (g) SWEEP_LOG_ON_ERROR(cudaGraphDestroy(g) == cudaSuccess, "cudaGraphDestroy");
    cudaGetLastError();
  }
  r.exec.reset();
  r.graph.reset();
  if (!graph_owned_.empty() && !step_graph_ && !eval_graph_) {
    // Queued replays may still use them.
    SWEEP_LOG_ON_ERROR(cudaStreamSynchronize(stream_.get()) == cudaSuccess,
                       "cudaStreamSynchronize");
    graph_owned_.clear();
  }
}

void CudaBackend::drop_graph() { drop(step_graph_); }

void CudaBackend::drop_evaluation_graph() { drop(eval_graph_); }

cudaEvent_t CudaBackend::stage_replay(const OptimizerStep& opt, std::uint64_t step,
                                      std::int64_t index_delta) {
  enter();
  if (!step_graph_.exec) throw Error("cuda: replay without a captured step");
  const int slot = static_cast<int>(host_replays_ % kRing);
  // The slot was last read by the replay kRing steps ago; wait for that one (normally long done).
  if (host_replays_ >= kRing) SWEEP_CHECK_CUDA(cudaEventSynchronize(ring_done_[slot].get()));
  StepScalars& s = step_ring_.as<StepScalars>()[slot];
  s.lr = opt.lr;
  const AdamFactors adam = adam_factors(opt.lr, opt.beta1, opt.beta2, opt.t);
  s.adam_step = adam.step;
  s.adam_inv_sqrt_bc2 = adam.inv_sqrt_bc2;
  s.pad_ = 0.f;
  s.step = step;
  s.index_delta = index_delta;
  s.label_delta = 0;
  ++host_replays_;
  return ring_done_[slot].get();
}

void CudaBackend::replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta) {
  cudaEvent_t slot_done = stage_replay(opt, step, index_delta);
  SWEEP_CHECK_CUDA(cudaGraphLaunch(step_graph_.exec.get(), stream_.get()));
  SWEEP_CHECK_CUDA(cudaEventRecord(slot_done, stream_.get()));
}

void CudaBackend::replay_evaluation(std::int64_t first, std::int64_t step, std::int64_t count) {
  enter();
  if (!eval_graph_.exec) throw Error("cuda: replay_evaluation without a captured batch");
  if (count <= 0) return;
  start_eval_kernel<<<1, 1, 0, stream_.get()>>>(eval_sequence_.as<std::int64_t>(), first, step);
  SWEEP_CHECK_LAUNCH();
  for (std::int64_t i = 0; i < count; ++i)
    SWEEP_CHECK_CUDA(cudaGraphLaunch(eval_graph_.exec.get(), stream_.get()));
}

}  // namespace sweep::trainer::cuda
