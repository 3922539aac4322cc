/*
 * backend.h — the operations the training engine needs from a device, and nothing else.
 *
 * Layers, the network, the optimizer and the training loop are written once, against this
 * interface; the CPU backend (BLAS + oneTBB, trainer/cpu/) and the CUDA backend (cuDNN + cuBLAS +
 * our kernels, trainer/cuda/) implement it side by side and are tested against each other and
 * against plain double-precision references (tests/trainer/).
 *
 * Backend holds the required ops: what every backend offers, enough to train and evaluate every
 * built-in layer. A backend may offer optional groups besides, each an interface of its own that
 * it implements next to Backend, found through Backend's queries (null where it offers none):
 *  - FusedOps (fused_ops.h): a ReLU folded into the op beside it, a convolution that pools its own
 *    outputs; callers run the fold's composition without it.
 *  - ChannelsLastOps (channels_last_ops.h): activations kept channels-last in bf16 or fp32
 *    (NhwcReference, nhwc_reference.h, the reference every backend can run); without it every
 *    activation is fp32 NCHW.
 *  - GraphCapture (graph_capture.h): a training step and an evaluation batch recorded once and
 *    replayed; without it every step runs eagerly.
 *  - ShapeTuning (shape_tuning.h): the batch size whose shapes the backend times.
 *
 * Conventions (every backend, every op, every group):
 *  - Pointers are in the backend's own memory (host for cpu, device for cuda); tensors are NCHW
 *    float32 (but for the ops on channels-last activations, channels_last_ops.h), dense
 *    activations are (N, features). Dense weights are (out, in), as PyTorch's.
 *  - Ops are asynchronous on the backend's stream; only copy_to_host and synchronize wait. No op
 *    allocates device memory per call after the first call with a given shape (workspaces are
 *    cached per backend), so a training step can be captured in a CUDA graph.
 *  - Backward ops OVERWRITE parameter gradients (beta = 0); nothing accumulates across steps.
 *  - Randomness (dropout masks, augmentation) comes from counter-based hashing of (seed, counter)
 *    (trainer/rng.h), so the CPU and CUDA backends draw the same numbers.
 *  - A failing library call throws sweep::CallError; an allocation that cannot be satisfied throws
 *    sweep::OutOfMemory with the bytes asked and free.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend/backend_types.h"
#include "trainer/backend/channels_last_ops.h"
#include "trainer/backend/fused_ops.h"
#include "trainer/backend/graph_capture.h"
#include "trainer/backend/shape_tuning.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;  // "cpu (2 threads, OpenBLAS)", "cuda:0 (NVIDIA H100 ...)"

  // ---- the optional groups this backend offers (the interfaces it implements besides this one),
  // null where it offers none.
  FusedOps* fused_ops() { return dynamic_cast<FusedOps*>(this); }
  ChannelsLastOps* channels_last_ops() { return dynamic_cast<ChannelsLastOps*>(this); }
  const ChannelsLastOps* channels_last_ops() const {
    return dynamic_cast<const ChannelsLastOps*>(this);
  }
  GraphCapture* graph_capture() { return dynamic_cast<GraphCapture*>(this); }
  const GraphCapture* graph_capture() const { return dynamic_cast<const GraphCapture*>(this); }
  ShapeTuning* shape_tuning() { return dynamic_cast<ShapeTuning*>(this); }

  // ---- memory (bytes). allocate throws OutOfMemory; deallocate never throws.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* p) noexcept = 0;
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;  // waits
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;  // within the backend
  virtual void fill(float* x, std::size_t n, float value) = 0;
  virtual void synchronize() = 0;

  // ---- dense: y (n, out) = x (n, in) * w(out, in)^T + b (out); b may be null.
  virtual void dense_forward(const float* x, const float* w, const float* b, float* y, int n,
                             int in, int out) = 0;
  // dx = dy w (skipped when dx is null); dw = dy^T x; db = column sums of dy (skipped when null).
  virtual void dense_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                              float* db, int n, int in, int out) = 0;

  // ---- 2-D convolution (cross-correlation, as every framework). b may be null.
  virtual void conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                              float* y) = 0;
  // dx skipped when null (first layer); db skipped when null.
  virtual void conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db) = 0;

  // ---- pooling. Max-pool backward routes dy to the first maximum of each window (recomputed
  // from x and y, as cuDNN does); average backward spreads dy / (kh * kw).
  virtual void pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) = 0;
  virtual void pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                             const float* dy, float* dx) = 0;

  // ---- activations (elementwise over n values). relu_backward: dx = y > 0 ? dy : 0.
  virtual void relu_forward(const float* x, float* y, std::size_t n) = 0;
  virtual void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) = 0;

  // ---- batch normalisation (spatial, per channel). save_mean / save_invstd (C) are kept for
  // backward; invstd = 1 / sqrt(biased batch variance + eps).
  virtual void batchnorm_forward_train(const BatchNormGeom& g, const float* x, const float* gamma,
                                       const float* beta, float* running_mean, float* running_var,
                                       float* save_mean, float* save_invstd, float* y) = 0;
  virtual void batchnorm_forward_infer(const BatchNormGeom& g, const float* x, const float* gamma,
                                       const float* beta, const float* running_mean,
                                       const float* running_var, float* y) = 0;
  virtual void batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                                  const float* gamma, const float* save_mean,
                                  const float* save_invstd, float* dx, float* dgamma,
                                  float* dbeta) = 0;

  // ---- dropout (inverted): keep with probability 1 - p; mask holds 0 or 1 / (1 - p), drawn
  // from hash(seed, counter + i).
  virtual void dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                               std::uint64_t seed, std::uint64_t counter) = 0;
  virtual void mul(const float* a, const float* b, float* y, std::size_t n) = 0;  // y = a * b
  // y = a + b, elementwise; y may be a or b. A residual block's sum, and in backward the sum of
  // its two branches' input gradients (the sum's own backward routes dy to both unchanged).
  virtual void add(const float* a, const float* b, float* y, std::size_t n) = 0;

  // ---- loss. logits (n, classes), labels (n). Mean softmax cross-entropy over `mean_over`
  // samples (n, unless these n are one replica's share of a larger batch: then the whole batch's
  // size, so that the replicas' gradients sum to the whole batch's). Writes dlogits = (softmax -
  // onehot) / mean_over unless null, and ADDS to stats (on the backend): stats[0] += sum of
  // per-sample losses, stats[1] += number of correct argmax predictions.
  virtual void softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n,
                                     int classes, float* dlogits, double* stats, int mean_over) = 0;
  void softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n, int classes,
                             float* dlogits, double* stats) {
    softmax_cross_entropy(logits, labels, n, classes, dlogits, stats, n);
  }
  // Mean squared error of one output per sample: pred (n), targets (n), the mean over `mean_over`
  // samples as above. Writes dpred = 2 (pred - target) / mean_over unless null, and ADDS to stats
  // (on the backend): stats[0] += sum of squared errors, stats[1] += sum of absolute errors.
  virtual void mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                                  double* stats, int mean_over) = 0;
  // pred[i] = argmax over classes of logits (first maximum).
  virtual void argmax(const float* logits, int n, int classes, std::int32_t* pred) = 0;

  // ---- optimizer. sum_squares ADDS sum(x^2) to *out (on the backend). clip_scale writes
  // *scale = min(1, max_norm / (sqrt(*sumsq) + 1e-6)) on the backend (global-norm clipping
  // without a host round trip). optimizer_step reads *grad_scale when it is not null.
  virtual void sum_squares(const float* x, std::size_t n, double* out) = 0;
  virtual void clip_scale(const double* sumsq, float max_norm, float* scale) = 0;
  virtual void optimizer_step(const OptimizerStep& s, float* params, const float* grads,
                              float* state1, float* state2, std::size_t n,
                              const float* grad_scale) = 0;

  // ---- data
  // y: (batch) int32 labels, or float targets when d.targets is set.
  virtual void gather_batch(const GatherDesc& d, float* x, void* y) = 0;
};

// Which backend to build for a trial. device < 0 on cuda means "the current device".
struct DeviceSpec {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;    // GPU ordinal
  int threads = 0;  // CPU threads for this trial's oneTBB arena (0 = all)
  // CUDA: tf32 / bf16 tensor-core math for conv and dense (bf16 keeps fp32 parameters and
  // activations and runs the products on bf16 operands). The CPU backend computes in fp32 always.
  Precision precision = Precision::fp32;
  // CUDA: only deterministic cuDNN algorithms, chosen by cuDNN's heuristics rather than timed, so
  // a seeded trial gives the same numbers in any process on the same GPU and cuDNN (slower: the
  // fastest weight-gradient algorithms accumulate with atomics). The CPU backend always is.
  bool deterministic = false;
  // CUDA: each layer's weight gradient on a second stream beside its data gradient
  // (CudaBackend::set_overlap_weight_gradients). The same numbers either way; off for figures
  // without it.
  bool overlap = true;
  // CUDA: how many trials run on this GPU at once in lockstep (a fused array's members, set by
  // train_array). Our convolution kernels then plan their blocks for 1/share of its SMs (fewer,
  // fuller blocks) and each shape's kernel choice is timed with that many calls at once: less GPU
  // time in all when many steps run together, while one step alone takes longer. 1: one trial
  // has the GPU.
  int share = 1;

  // Written out: nvcc compiles this header as C++17, which has no defaulted comparisons.
  bool operator==(const DeviceSpec& o) const {
    return kind == o.kind && index == o.index && threads == o.threads && precision == o.precision &&
           deterministic == o.deterministic && overlap == o.overlap && share == o.share;
  }
};

// The factory (trainer/backend_factory.cpp). Throws sweep::Error with a clear message when the
// CUDA backend was not built (SWEEP_WITH_CUDA=OFF) or the device does not exist.
std::unique_ptr<Backend> make_backend(const DeviceSpec& spec);
bool cuda_backend_built();
int cuda_device_count();  // 0 when not built or no device
// Starts the GPUs among `devices` on another thread (their contexts, with cuDNN and cuBLAS loaded,
// which takes a noticeable part of a small sweep's start), once per device and process; the future
// is ready when they are. A run
// loads its data meanwhile. Never throws: a device that cannot start is reported when its backend
// is made.
std::future<void> warm_up_devices(std::vector<DeviceSpec> devices);

// RAII for backend memory: frees through the backend that allocated it. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Backend& b, std::size_t bytes) : backend_(&b), bytes_(bytes) {
    if (bytes) ptr_ = b.allocate(bytes);
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      backend_ = o.backend_;
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset() noexcept {
    if (ptr_ && backend_) backend_->deallocate(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  template <class T = float>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  float* f() const { return static_cast<float*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  Backend* backend_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace sweep::trainer
