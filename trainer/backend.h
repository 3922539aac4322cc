/*
 * backend.h — the operations the training engine needs from a device, and nothing else.
 *
 * Layers, the network, the optimizer and the training loop are written once, against this
 * interface; the CPU backend (BLAS + oneTBB, trainer/cpu/) and the CUDA backend (cuDNN + cuBLAS +
 * our kernels, trainer/cuda/) implement it side by side and are tested against each other and
 * against plain double-precision references (tests/trainer/).
 *
 * Conventions (every backend, every op):
 *  - Pointers are in the backend's own memory (host for cpu, device for cuda); tensors are NCHW
 *    float32 (but for the ops on channels-last activations, "activations kept channels-last"
 *    below), dense
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

#include "trainer/vocabulary.h"

namespace sweep::trainer {

enum class DeviceKind { cpu, cuda };

// How an activation tensor is stored between two layers (see "activations kept channels-last"
// below): fp32 NCHW, or channels-last (N, H, W, C) in bf16 or fp32.
enum class Storage { fp32_nchw, bf16_nhwc, fp32_nhwc };
inline bool is_nhwc(Storage s) { return s != Storage::fp32_nchw; }
inline bool is_bf16(Storage s) { return s == Storage::bf16_nhwc; }
// One bfloat16 value as stored: the top 16 bits of an fp32.
struct Bf16 {
  std::uint16_t bits;
};
// Bytes of n values in storage s.
inline std::size_t storage_bytes(Storage s, std::size_t n) {
  return n * (is_bf16(s) ? sizeof(Bf16) : sizeof(float));
}
// What a layer can do with channels-last activations (Layer::nhwc_role).
enum class NhwcRole { none, passthrough, reads, writes, reads_writes };

struct ConvGeom {
  int n, c, h, w;  // input (N, C, H, W)
  int k, r, s;     // filters, kernel height, kernel width: weights (K, C, R, S)
  int stride_h, stride_w;
  int pad_h, pad_w;  // symmetric zero padding
  int out_h, out_w;  // (H + 2*pad_h - R) / stride_h + 1, likewise for W
};

enum class PoolMode { max, average };  // average counts padded zeros (PyTorch's default)

struct PoolGeom {
  int n, c, h, w;
  int kh, kw, stride_h, stride_w, pad_h, pad_w;
  int out_h, out_w;
};

// 2x2 windows, stride 2, no padding: nearly every CNN's pooling, which both backends run on a
// straight-line fast path (same rules, so their results agree bit for bit). The output size is
// checked too: the fast paths index by it, and a geometry that disagrees takes the general path
// (which validates it).
inline bool is_2x2_stride2(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 &&
         g.pad_w == 0 && g.out_h == g.h / 2 && g.out_w == g.w / 2;
}

// The 2x2 max pooling of stride 2 over a convolution's output (Backend::conv2d_forward_maxpool2x2).
inline PoolGeom maxpool2x2_of(const ConvGeom& g) {
  return PoolGeom{g.n, g.k, g.out_h, g.out_w, 2, 2, 2, 2, 0, 0, g.out_h / 2, g.out_w / 2};
}

struct BatchNormGeom {
  int n, c, hw;    // per-channel statistics over N*H*W (dense: hw = 1)
  float eps;       // 1e-5 (PyTorch)
  float momentum;  // running = (1 - momentum) * running + momentum * batch (PyTorch, 0.1);
                   // the running variance uses the unbiased batch variance
};

// One optimizer update over a flat parameter array (all parameters of a network live in one
// allocation, so this is one launch). Semantics are PyTorch's torch.optim with L2 weight decay
// added to the gradient (not AdamW):
//   g = grad * grad_scale + weight_decay * p
//   sgdm:    v = momentum * v + g;  p -= lr * (nesterov ? g + momentum * v : v)          (state1 =
//   v) adam:    m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//            p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)       (state1 = m, state2 =
//            v)
//   rmsprop: s = alpha s + (1-alpha) g^2;  p -= lr * g / (sqrt(s) + eps)                  (state1 =
//   s)
struct OptimizerStep {
  OptimizerKind kind = OptimizerKind::sgdm;
  float lr = 0.01f;
  float momentum = 0.9f;
  bool nesterov = false;
  float beta1 = 0.9f, beta2 = 0.999f;
  float alpha = 0.99f;  // rmsprop squared-gradient decay
  float eps = 1e-8f;
  float weight_decay = 0.f;
  std::int64_t t = 1;  // 1-based step count (Adam's bias correction)
};

// Gather a mini-batch from a data set held by the backend, (N, C, H, W) uint8 images or float
// features with uint8 labels or float regression targets, normalise each value to
// (raw - center[c]) * scale[c] + shift[c] (three rounded float operations, no fused multiply-add:
// every backend's exact arithmetic; BatchSource makes the factors from the training split's
// statistics, gather_factors in batch_source.h: pixels 0, 1 / (255 std), -mean / std; features
// mean, 1 / std, 0, so that a feature of large mean and small spread keeps its digits) and augment,
// per sample i of the batch drawn from hash(seed, step, i): horizontal flip with probability 1/2
// when `flip`, then a shift by (dy, dx) uniform in [-max_shift, max_shift] with zeros coming in
// after normalisation (covers random translation and random crop with padding); i counts from
// first_sample. max_shift = 0 and flip = false: a plain normalised copy.
struct GatherDesc {
  int batch = 0, c = 0, h = 0, w = 0;
  const std::uint8_t* images = nullptr;   // (N, C, H, W) on the backend, or null when features are
  const float* features = nullptr;        // (N, C, H, W) on the backend, or null when images are
  const std::uint8_t* labels = nullptr;   // (N), or null when targets are
  const float* targets = nullptr;         // (N) regression targets, or null when labels are
  const std::int32_t* indices = nullptr;  // (batch): rows of the data set to take, on the backend
  const float* center = nullptr;          // (C) on the backend, or null: 0 for every channel
  const float* scale = nullptr;           // (C) on the backend
  const float* shift = nullptr;           // (C) on the backend
  bool flip = false;
  int max_shift = 0;
  std::uint64_t seed = 0, step = 0;
  // The position of this gather's first sample in its whole batch: augmentation draws for sample
  // first_sample + i, so a replica gathering its share of a batch draws what one device would.
  int first_sample = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceKind kind() const = 0;
  virtual std::string name() const = 0;  // "cpu (2 threads, OpenBLAS)", "cuda:0 (NVIDIA H100 ...)"

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

  // A dense layer whose output feeds a ReLU: y = max(0, x w^T + b), one pass where the backend
  // can (the ReLU's own launch saved); the same numbers as dense_forward then relu_forward.
  virtual void dense_forward_relu(const float* x, const float* w, const float* b, float* y, int n,
                                  int in, int out) {
    dense_forward(x, w, b, y, n, in, out);
    relu_forward(y, y, std::size_t(n) * std::size_t(out));
  }
  // dense_backward for a dense layer whose input x is a ReLU's output: dx (never null) goes on
  // through that ReLU, dx = x > 0 ? dy w : 0, so the ReLU's backward is folded in; the same
  // numbers as dense_backward then relu_backward(x, dx, dx).
  virtual void dense_backward_relu_input(const float* x, const float* w, const float* dy, float* dx,
                                         float* dw, float* db, int n, int in, int out) {
    dense_backward(x, w, dy, dx, dw, db, n, in, out);
    relu_backward(x, dx, dx, std::size_t(n) * std::size_t(in));
  }

  // ---- 2-D convolution (cross-correlation, as every framework). b may be null.
  virtual void conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                              float* y) = 0;
  // dx skipped when null (first layer); db skipped when null.
  virtual void conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db) = 0;
  // Bytes a convolution layer holds for conv2d_forward_stored's `kept` at batch g.n, its input
  // stored as xs: operands in the form the backend computes with, kept from the training forward
  // to the backward (CUDA on channels-last activations: the weights' K,R,S,C copy in the plan's
  // type, and x's when x is fp32 NCHW, so that backward converts neither again). 0 (the default):
  // nothing to keep.
  virtual std::size_t conv_kept_bytes(const ConvGeom& g, Storage xs) {
    (void)g;
    (void)xs;
    return 0;
  }

  // ---- pooling. Max-pool backward routes dy to the first maximum of each window (recomputed
  // from x and y, as cuDNN does); average backward spreads dy / (kh * kw).
  virtual void pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) = 0;
  virtual void pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                             const float* dy, float* dx) = 0;
  // 2x2 max pooling of stride 2 (is_2x2_stride2) that also keeps, per window, which element the
  // backward routes dy to: a byte, 0-3 in row-major order (the first equal to the maximum), 4 when
  // none is (a window holding a NaN). Its backward then reads those bytes and dy, not x and y:
  // the same dx (every element written, a trailing odd row or column zero).
  virtual void maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                         std::uint8_t* argmax) = 0;
  virtual void maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax,
                                          const float* dy, float* dx) = 0;
  // A convolution (fp32 NCHW, as conv2d_forward) followed by that pooling of its output: the
  // pooled values and their argmax as conv2d_forward then maxpool2x2_forward_argmax give them, bit
  // for bit. y (the convolution's output) is scratch the backend may or may not write: on a GPU
  // our tiled kernel pools its outputs in shared memory and never writes them, which saves a
  // pass and the write and two reads of the largest activation of a LeNet. argmax null (an
  // inference forward, which no backward follows): the pooled values only.
  virtual void conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                         const float* b, float* y, float* pooled,
                                         std::uint8_t* argmax) = 0;

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
  // Batch norm whose output feeds a ReLU: y = max(0, bn(x)) in one pass where the backend can
  // (the ReLU's launches saved); the same numbers as the batch-norm op then relu_forward.
  virtual void batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x,
                                            const float* gamma, const float* beta,
                                            float* running_mean, float* running_var,
                                            float* save_mean, float* save_invstd, float* y) {
    batchnorm_forward_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd,
                            y);
    relu_forward(y, y, std::size_t(g.n) * std::size_t(g.c) * std::size_t(g.hw));
  }
  virtual void batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x,
                                            const float* gamma, const float* beta,
                                            const float* running_mean, const float* running_var,
                                            float* y) {
    batchnorm_forward_infer(g, x, gamma, beta, running_mean, running_var, y);
    relu_forward(y, y, std::size_t(g.n) * std::size_t(g.c) * std::size_t(g.hw));
  }
  // batchnorm_backward through that ReLU: y = max(0, bn(x)) and dy its gradient; the same numbers
  // as relu_backward(y, dy, dx) then batchnorm_backward with dx as its dy (in place).
  virtual void batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                                       const float* dy, const float* gamma, const float* save_mean,
                                       const float* save_invstd, float* dx, float* dgamma,
                                       float* dbeta) {
    relu_backward(y, dy, dx, std::size_t(g.n) * std::size_t(g.c) * std::size_t(g.hw));
    batchnorm_backward(g, x, dx, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
  }

  // ---- dropout (inverted): keep with probability 1 - p; mask holds 0 or 1 / (1 - p), drawn
  // from hash(seed, counter + i).
  virtual void dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                               std::uint64_t seed, std::uint64_t counter) = 0;
  virtual void mul(const float* a, const float* b, float* y, std::size_t n) = 0;  // y = a * b
  // y = a + b, elementwise; y may be a or b. A residual block's sum, and in backward the sum of
  // its two branches' input gradients (the sum's own backward routes dy to both unchanged).
  virtual void add(const float* a, const float* b, float* y, std::size_t n) = 0;
  // y = max(0, a + b): a residual block's sum and the ReLU after it, in one pass where the backend
  // can; the same numbers as add then relu_forward.
  virtual void add_relu(const float* a, const float* b, float* y, std::size_t n) {
    add(a, b, y, n);
    relu_forward(y, y, n);
  }

  // ---- activations kept channels-last. A backend may keep the tensors between layers that take
  // them channels-last ((N, H, W, C), channels contiguous) instead of fp32 NCHW, in the storage
  // nhwc_storage() names: bf16 (CUDA in bf16 mode: half the bytes, and no conversion around each
  // bf16 convolution) or fp32 (CUDA in tf32 mode: cuDNN's tf32 tensor-core convolutions want
  // channels-last, and transpose NCHW tensors before and after themselves). Which tensors are is
  // planned once per network (trainer/layers/storage_plan.h) from nhwc_storage() and
  // conv_reads_nhwc() / conv_writes_nhwc(). The ops below take the storage of their activations
  // (bf16_nhwc or fp32_nhwc), compute in fp32 and round each bf16 output once (to nearest even, as
  // __float2bfloat16_rn); their defaults are the reference every backend can run: convert the
  // operands to fp32 NCHW, run the fp32 op, convert the results back
  // (backend_nhwc_reference.cpp). Parameters, their gradients and batch-norm statistics stay
  // fp32 (float*).
  // The channels-last storage this backend keeps; fp32_nchw: none.
  virtual Storage nhwc_storage() const { return Storage::fp32_nchw; }
  bool keeps_nhwc() const { return is_nhwc(nhwc_storage()); }
  // Whether a convolution of this shape reads channels-last activations: channels in multiples of
  // 8 on both sides (the tensor cores' granule; narrower convolutions run on fp32 NCHW); and
  // whether it writes them: filters in multiples of 8 (a network's first convolution, on 1 or 3
  // channels, then writes its output channels-last for the layers after it).
  bool conv_reads_nhwc(const ConvGeom& g) const {
    return keeps_nhwc() && g.c % 8 == 0 && g.k % 8 == 0;
  }
  bool conv_writes_nhwc(const ConvGeom& g) const { return keeps_nhwc() && g.k % 8 == 0; }
  // fp32 (n, c, hw) <-> storage s (bf16 or fp32 (n, hw, c); fp32_nchw: a copy).
  virtual void to_storage(Storage s, const float* x, void* y, int n, int c, int hw) = 0;
  virtual void from_storage(Storage s, const void* x, float* y, int n, int c, int hw) = 0;

  // A convolution whose input and output are each in any storage (xs, ys; dx is in xs and dy in
  // ys). kept: conv_kept_bytes(g, xs) bytes the layer holds from its training forward to its
  // backward (null in inference: then nothing is kept). fp32 NCHW both ways: conv2d_forward /
  // conv2d_backward.
  virtual void conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x, const float* w,
                                     const float* b, Storage ys, void* y, void* kept);
  virtual void conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x,
                                      const void* kept, const float* w, Storage ys, const void* dy,
                                      void* dx, float* dw, float* db);
  // Batch norm on channels-last tensors of storage s, with the ReLU after it when `relu` (the
  // *_relu ops' semantics); relu_y: the training forward's output when relu, else null.
  virtual void batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                            const float* gamma, const float* beta,
                                            float* running_mean, float* running_var,
                                            float* save_mean, float* save_invstd, void* y,
                                            bool relu);
  virtual void batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                            const float* gamma, const float* beta,
                                            const float* running_mean, const float* running_var,
                                            void* y, bool relu);
  virtual void batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                       const void* relu_y, const void* dy, const float* gamma,
                                       const float* save_mean, const float* save_invstd, void* dx,
                                       float* dgamma, float* dbeta);
  virtual void relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n);
  virtual void relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                                  std::size_t n);
  virtual void add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n, bool relu);
  // Max pooling 2x2 stride 2 (is_2x2_stride2) only.
  virtual void maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y);
  virtual void maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x, const void* y,
                                        const void* dy, void* dx);
  // Global average pooling (g's window is its whole plane): (n, h, w, c) of storage s in, fp32
  // (n, c) out; backward the other way.
  virtual void global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x, float* y);
  virtual void global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                            void* dx);

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

  // ---- optional: the batch size that matters. A backend that times algorithms per shape (cuDNN's
  // Find, a few milliseconds per convolution) does so only for batch n; other batch sizes (the
  // last partial batch of an epoch or of a validation pass, run once an epoch) take a choice that
  // costs no device time. 0 (the default): time every shape.
  virtual void tune_for_batch(int /*n*/) {}

  // ---- optional: capture one training step and replay it (CUDA graphs). Backends that cannot
  // capture keep these defaults; the training loop then runs every step eagerly. Protocol: run one
  // step eagerly (every shape seen), then begin_capture(); <the step's ops exactly as eager>;
  // end_capture() — the captured ops have NOT run — then replay(...) for this and every later step
  // with the same shapes. While capturing, optimizer_step and gather_batch read their per-step
  // values (learning rate, Adam's t, augmentation step, index offset) from a device block that
  // replay() refreshes: `index_delta` is the number of index rows between this step's indices
  // pointer and the one seen at capture. Dropout cannot be captured (its counter varies).
  virtual bool can_capture() const { return false; }
  virtual void begin_capture() {}
  virtual void end_capture() {}
  virtual void replay(const OptimizerStep& /*opt*/, std::uint64_t /*step*/,
                      std::int64_t /*index_delta*/) {}
  virtual void drop_graph() {}

  // ---- optional: a second recorded graph, of one evaluation batch (gather, inference forward,
  // loss, argmax), replayed for each full batch of an evaluation pass (Evaluator). Eager, each
  // batch of a small model costs its library calls' host time (cuDNN's legacy calls, ~30 us),
  // which is what a fused array's many members' validations wait on; a replay is one launch.
  // Protocol: run one such batch eagerly, begin_evaluation_capture(key); <that batch's ops for
  // the batch at rows r of the pass>; end_capture(); then replay_evaluation(first, step, count)
  // runs the batches at rows r + first, r + first + step, ... (count of them): each offset is
  // added to the index pointer and to the label arrays' pointers (gather's labels or targets out,
  // the loss's labels or targets in, argmax's predictions out) seen at capture. The offsets are
  // made on the device, so the host queues a whole pass without waiting for any of it.
  // `key` names the recording's owner: has_evaluation_graph(key) is false once another owner has
  // recorded, or after drop_evaluation_graph(). The step's graph stays valid throughout.
  virtual void begin_evaluation_capture(std::uint64_t /*key*/) {}
  virtual bool has_evaluation_graph(std::uint64_t /*key*/) const { return false; }
  virtual void replay_evaluation(std::int64_t /*first*/, std::int64_t /*step*/,
                                 std::int64_t /*count*/) {}
  virtual void drop_evaluation_graph() {}
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
// Starts the GPUs among `devices` on another thread (their contexts, with cuDNN and cuBLAS loaded:
// about 0.35 s on an H200), once per device and process; the future is ready when they are. A run
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
