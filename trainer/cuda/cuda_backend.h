/*
 * cuda_backend.h — the Backend on one NVIDIA GPU: cuDNN, cuBLAS and our own kernels.
 *
 * One device, one stream, one cuDNN and one cuBLAS handle per backend object, all owned here and
 * released by the destructor (a finished trial returns every byte, handles included); in backward
 * a second, lower-priority stream with handles of its own runs the weight gradients beside the
 * data gradients (cuda_side_stream.cu), invisible to callers: every op keeps stream order. Every
 * public entry point first makes this backend's device current, because each trial runs on its
 * own thread and the current device is per thread. Per-shape state (cuDNN plans, the convolution
 * workspace) is built on the first call with a shape and reused after, so a step whose shapes
 * have been seen once allocates nothing and can be captured in a CUDA graph (begin_capture /
 * end_capture / replay below; backend.h's ops stay eager and asynchronous on the stream).
 */
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/cuda/cuda_raii.h"
#include "trainer/cuda/cudnn_graph.h"
#include "trainer/cuda/cudnn_legacy.h"
#include "trainer/cuda/launch.cuh"
#include "trainer/cuda/pending_ranges.h"

namespace sweep::trainer::cuda {

// It offers every optional group (backend.h): fused ops, channels-last activations (in bf16 and
// tf32), recorded steps, timed shapes.
class CudaBackend final : public Backend,
                          public FusedOps,
                          public ChannelsLastOps,
                          public GraphCapture,
                          public ShapeTuning {
 public:
  // Throws sweep::Error when `device` does not exist. tf32: convolutions and dense products may
  // use TF32 tensor cores (about 1e-3 relative error); fp32 forbids it in cuDNN and cuBLAS. bf16:
  // their operands are rounded to bfloat16 (about 4e-3 relative), products accumulate in fp32.
  // deterministic: DeviceSpec::deterministic (untimed, deterministic convolution algorithms).
  explicit CudaBackend(int device, MathMode math = MathMode::fp32, bool deterministic = false);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  DeviceKind kind() const override { return DeviceKind::cuda; }
  std::string name() const override { return name_; }
  int device() const { return device_; }
  // The backend's stream, once it has waited for the side stream's queued weight gradients (see
  // set_overlap_weight_gradients): for callers that queue work of their own on it (NCCL's
  // reductions, timing events). Call it again for each batch of such work.
  cudaStream_t joined_stream();
  MathMode math() const { return math_; }
  // bf16 and tf32 mode: how a convolution shape picks its plan. fastest (default): in bf16 the
  // bf16 or the tf32 plan, whichever runs faster in a CUDA graph; in tf32 the channels-last plan
  // where the activations are kept channels-last. nhwc_first: the channels-last plan whenever
  // cuDNN has an engine for the shape (the op tests use it to exercise that path on every shape).
  // Set it before the first convolution: plans already built keep their choice.
  enum class ConvChoice { fastest, nhwc_first };
  void set_conv_choice(ConvChoice c) { conv_choice_ = c; }
  // fp32 and tf32: whether a convolution op runs on our kernels (direct_conv.h, tiled_conv.h) or
  // on cuDNN's plan. timed (default): per shape and op, whichever a CUDA-graph timing finds
  // fastest, for the batch size cudnnFind times (never when deterministic: a fixed rule then
  // chooses, the same in every process: choose_deterministic_conv); always: the direct kernels
  // wherever they take the shape; tiled: the tiled kernels for forward and backward data wherever
  // they take the shape, else as always; scatter: as tiled, with the data gradient on
  // scatter_dgrad.h where it fits (the op tests use all three); never: cuDNN only. Set it before
  // the first convolution.
  enum class DirectConv { timed, always, tiled, scatter, never };
  void set_direct_conv(DirectConv d) { direct_conv_ = d; }
  void tune_for_batch(int n) override { tuned_batch_ = n; }
  // In backward, a layer's weight and bias gradients feed nothing but the optimizer, so (on, the
  // default) they run on a second stream of lower priority while this one goes on with the data
  // gradient and the layers below: at small batches neither fills the GPU, and the step's
  // critical path loses them (cuda_side_stream.cu). Any later op that touches memory the side
  // work still reads or writes waits for it first (pending_ranges.h), and every op outside the
  // backward chain does, so callers see one ordered stream. Off: all work on the one stream.
  void set_overlap_weight_gradients(bool on) { overlap_ = on; }
  // DeviceSpec::share: our convolution kernels plan for 1/share of the SMs, and each shape's
  // choice among cuDNN and ours is timed with that many calls running at once (what a call costs
  // a GPU shared by that many steps), and cuBLAS picks its kernels for that share of the SMs
  // (cublasSetSmCountTarget). Set it before the first convolution (plans and timed choices are
  // made once per shape).
  void set_gpu_share(int share);
  // Deterministic mode sums our convolution kernels in the order of their plans for this share of
  // the device whatever the step's share, so that a step computes the same bits alone and in a
  // fused array (choose_deterministic_conv). A quarter: a lone trial runs about as fast as with
  // plans for the whole GPU and a fused array much faster; a smaller share slows the lone trial
  // (bench/RESULTS.md).
  static constexpr int kDeterministicShare = 4;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void fill(float* x, std::size_t n, float value) override;
  void synchronize() override;

  void dense_forward(const float* x, const float* w, const float* b, float* y, int n, int in,
                     int out) override;
  void dense_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                      float* db, int n, int in, int out) override;
  void dense_forward_relu(const float* x, const float* w, const float* b, float* y, int n, int in,
                          int out) override;
  void dense_backward_relu_input(const float* x, const float* w, const float* dy, float* dx,
                                 float* dw, float* db, int n, int in, int out) override;

  void conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                      float* y) override;
  void conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                       float* dx, float* dw, float* db) override;
  std::size_t conv_kept_bytes(const ConvGeom& g, Storage xs) override;
  void conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x, const float* w,
                             const float* b, Storage ys, void* y, void* kept) override;
  void conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x, const void* kept,
                              const float* w, Storage ys, const void* dy, void* dx, float* dw,
                              float* db) override;

  // bf16 and tf32 mode keep activations channels-last (bf16 or fp32 NHWC) between the layers that
  // take them (backend.h), unless turned off here (before the network is built: bench_gpu_lenet
  // measures both) or deterministic (its convolutions run the legacy plans on NCHW).
  void set_nhwc_activations(bool on) { nhwc_activations_ = on; }
  Storage nhwc_storage() const override {
    if (deterministic_ || !nhwc_activations_) return Storage::fp32_nchw;
    return math_ == MathMode::bf16   ? Storage::bf16_nhwc
           : math_ == MathMode::tf32 ? Storage::fp32_nhwc
                                     : Storage::fp32_nchw;
  }
  void to_storage(Storage s, const float* x, void* y, int n, int c, int hw) override;
  void from_storage(Storage s, const void* x, float* y, int n, int c, int hw) override;
  void batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                    const float* gamma, const float* beta, float* running_mean,
                                    float* running_var, float* save_mean, float* save_invstd,
                                    void* y, bool relu) override;
  void batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                    const float* gamma, const float* beta,
                                    const float* running_mean, const float* running_var, void* y,
                                    bool relu) override;
  void batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x, const void* relu_y,
                               const void* dy, const float* gamma, const float* save_mean,
                               const float* save_invstd, void* dx, float* dgamma,
                               float* dbeta) override;
  void relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n) override;
  void relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                          std::size_t n) override;
  void add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n,
                bool relu) override;
  void maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y) override;
  void maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x, const void* y,
                                const void* dy, void* dx) override;
  void global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x, float* y) override;
  void global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                    void* dx) override;

  void pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) override;
  void maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                 std::uint8_t* argmax) override;
  void maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax, const float* dy,
                                  float* dx) override;
  void conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w, const float* b,
                                 float* y, float* pooled, std::uint8_t* argmax) override;
  void pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                     const float* dy, float* dx) override;

  void relu_forward(const float* x, float* y, std::size_t n) override;
  void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) override;

  void batchnorm_forward_train(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, float* running_mean, float* running_var,
                               float* save_mean, float* save_invstd, float* y) override;
  void batchnorm_forward_infer(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, const float* running_mean,
                               const float* running_var, float* y) override;
  void batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                          const float* gamma, const float* save_mean, const float* save_invstd,
                          float* dx, float* dgamma, float* dbeta) override;
  void batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x, const float* gamma,
                                    const float* beta, float* running_mean, float* running_var,
                                    float* save_mean, float* save_invstd, float* y) override;
  void batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x, const float* gamma,
                                    const float* beta, const float* running_mean,
                                    const float* running_var, float* y) override;
  void batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                               const float* dy, const float* gamma, const float* save_mean,
                               const float* save_invstd, float* dx, float* dgamma,
                               float* dbeta) override;

  void dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                       std::uint64_t seed, std::uint64_t counter) override;
  void mul(const float* a, const float* b, float* y, std::size_t n) override;
  void add(const float* a, const float* b, float* y, std::size_t n) override;
  void add_relu(const float* a, const float* b, float* y, std::size_t n) override;

  using Backend::softmax_cross_entropy;
  void softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n, int classes,
                             float* dlogits, double* stats, int mean_over) override;
  void mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                          double* stats, int mean_over) override;
  void argmax(const float* logits, int n, int classes, std::int32_t* pred) override;

  void sum_squares(const float* x, std::size_t n, double* out) override;
  void clip_scale(const double* sumsq, float max_norm, float* scale) override;
  void optimizer_step(const OptimizerStep& s, float* params, const float* grads, float* state1,
                      float* state2, std::size_t n, const float* grad_scale) override;

  void gather_batch(const GatherDesc& d, float* x, void* y) override;

  // ---- CUDA-graph capture of one training step (shapes fixed, every shape seen once eagerly).
  // begin_capture(); <the step's ops, as in an eager step>; end_capture(); then per step
  // replay(...). While capturing, optimizer_step and gather_batch take their per-step values
  // (learning rate, Adam's t, augmentation step, offset into the index array) from a device block
  // that each replay refreshes from `replay`'s arguments; dropout cannot be captured yet (throws).
  // Throws sweep::Error when an op would allocate or build a plan during capture.
  void begin_capture() override;
  void end_capture() override;
  bool has_graph() const { return static_cast<bool>(step_graph_.exec); }
  // opt: this step's optimizer settings (lr, t); step: GatherDesc::step for this step;
  // index_delta: rows between this step's indices pointer and the one seen at capture.
  void replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta) override;
  // Forgets the graph; called while capturing (an op threw mid-capture), it also ends the capture
  // and discards what was recorded, so the stream runs eager work again. Never throws.
  void drop_graph() override;

  // ---- The evaluation batch's graph, beside the step's (graph_capture.h).
  void begin_evaluation_capture(std::uint64_t key) override;
  bool has_evaluation_graph(std::uint64_t key) const override {
    return eval_graph_.exec && eval_key_ == key;
  }
  void replay_evaluation(std::int64_t first, std::int64_t step, std::int64_t count) override;
  void drop_evaluation_graph() override;

  // ---- Several backends' steps in one graph launch: replay() split in two. captured_graph() is
  // the recorded step, for cudaGraphAddChildGraphNode (which copies it); stage_replay() is
  // replay()'s host half: it writes this replay's values to the next ring slot without launching
  // anything and returns the event the caller must record on its stream right after launching the
  // graph that holds this step (once per stage_replay). bench_gpu_multigraph measures a fused
  // array's round this way; train_array keeps replay(), each member on its own stream, which is
  // faster for the small models fused arrays hold (bench/RESULTS.md).
  cudaGraph_t captured_graph() const { return step_graph_.graph.get(); }
  cudaEvent_t stage_replay(const OptimizerStep& opt, std::uint64_t step, std::int64_t index_delta);
  // The convolution workspace, at least `bytes` (grow below; public for the op tests).
  void* conv_workspace(std::size_t bytes);

 private:
  cudaStream_t stream() const { return stream_.get(); }
  void set_device() const;  // cudaSetDevice(device_)
  // Every op's first call: set_device(), then the stream waits for queued side work. The backward
  // chain's ops (data gradients, pooling, activations, sums, batch norm) call enter_backward
  // instead, which waits only when the op touches what that work still reads or writes.
  void enter();
  // cuBLAS and cuDNN handles working on stream s, cuBLAS with this backend's math mode and its own
  // workspace in blas_workspace: the main stream's and the side stream's.
  void target_sm_share(cublasHandle_t blas) const;  // cublasSetSmCountTarget for share_
  int device_sm_count() const;                      // the device's multiprocessors
  int shared_sm_count() const;  // the device's SMs / share_ (at least 1): what a step gets
  // The SMs of the plans whose order of sums deterministic mode keeps at every share: the
  // device's / kDeterministicShare.
  int deterministic_order_sms() const;
  // The step shares the device with others (share_ > 1, a fused array's member): our memory-bound
  // kernels then take fewer, longer threads (maxpool2x2.cuh, skinny_dense.cuh), which leave the
  // other steps' kernels room on the SMs; alone a step keeps the shortest time a launch.
  bool shares_device() const { return share_ > 1; }
  void make_handles(cudaStream_t s, CublasHandle& blas, DeviceMemory& blas_workspace,
                    CudnnHandle& dnn);
  void enter_backward(std::initializer_list<MemoryRange> reads,
                      std::initializer_list<MemoryRange> writes);
  // The second stream for weight gradients, its own handles and grow-only buffers (created on the
  // first backward that uses it), and what its queued work touches.
  struct Side {
    Stream stream;
    CublasHandle cublas;
    CudnnHandle cudnn;
    DeviceMemory cublas_workspace, conv_workspace, scratch;
    Event fork, join;
    PendingRanges pending;
  };
  // The side stream when a weight gradient should run there (overlap on and a data gradient to
  // run beside it), else nullptr. Its buffers may then be grown; fork_side() after that.
  Side* side_for(bool has_data_gradient);
  // The side stream waits for this stream's work so far; its next ops touch reads / writes.
  void fork_side(Side& side, std::initializer_list<MemoryRange> reads,
                 std::initializer_list<MemoryRange> writes);
  void join_side();  // this stream waits for all queued side work
  cudnnHandle_t dnn() const { return cudnn_.get(); }
  // A convolution shape's cuDNN plan (fp32 or tf32), which of its ops run on our kernels instead,
  // and the graph API's channels-last plan where it is taken (make_conv_plans; then it runs all
  // three ops).
  enum class ConvImpl { cudnn, direct, tiled, scatter };  // scatter: data gradient only
  struct ConvEntry {
    std::unique_ptr<ConvPlan> plan;
    std::unique_ptr<NhwcConvPlan> nhwc;
    bool nhwc_our_filter = false;  // fp32 NHWC: our weight gradient (nhwc_wgrad.h) runs instead
    ConvImpl forward = ConvImpl::cudnn, data = ConvImpl::cudnn, filter = ConvImpl::cudnn;
    int filter_parts = 1;  // direct_conv_filter_parts
    // The SMs our kernels plan each op for: sm_count_, or when deterministic a canonical plan's
    // (choose_deterministic_conv).
    int forward_sms = 0, data_sms = 0, filter_sms = 0;
  };
  const ConvEntry& conv_entry(const ConvGeom& g);
  // The storage of the channels-last plan a shape may take (bf16 or fp32 NHWC), or fp32_nchw.
  Storage nhwc_plan_storage(const ConvGeom& g) const;
  // The shape's fp32 or tf32 plan, and (timed shapes) its channels-last plan where it is taken.
  void make_conv_plans(const ConvGeom& g, bool timed, ConvEntry& e);
  // Fills e's direct_* choices (cuda_direct_conv.cu). `timed`: the shape's batch is the tuned one.
  void choose_direct_conv(const ConvGeom& g, bool timed, ConvEntry& e);
  // training.deterministic's fixed rule in place of the timing (the flags: which kernels fit).
  void choose_deterministic_conv(const ConvGeom& g, bool tiled, bool scatter, ConvEntry& e) const;
  // Whether a choice (a ConvImpl as the tuning cache keeps it) names a kernel that takes the
  // shape: cuDNN always; ours where the flags say they fit.
  static bool takes(double impl, bool direct, bool tiled, bool scatter);
  // An untimed shape's choices: those of the same layer at the tuned batch, where they take it
  // (the flags: which of our kernels take g).
  void inherit_direct_conv(const ConvGeom& g, bool direct, bool tiled, bool tiled_filter,
                           bool scatter, ConvEntry& e) const;
  // conv_plans_'s key of g's layer at batch n.
  using ConvKey = std::array<int, 15>;
  static ConvKey conv_key(const ConvGeom& g, int n);
  // bf16 mode: whether the channels-last plan's forward and backward on fp32 NCHW tensors, with
  // their conversions, take less GPU time in a CUDA graph than the legacy plan's
  // (cuda_direct_conv.cu; once per shape and process).
  bool nhwc_runs_faster(const ConvGeom& g, const NhwcConvPlan& nhwc, const ConvPlan& legacy);
  // fp32 NHWC: whether our TF32 weight gradient (nhwc_wgrad.h) takes less GPU time than the plan's
  // in a CUDA graph (cuda_direct_conv.cu; once per shape and process).
  bool our_nhwc_filter_faster(const ConvGeom& g, const NhwcConvPlan& nhwc);
  const PoolPlan& pool_plan(const PoolGeom& g, PoolMode mode);
  // m itself when it holds `bytes`, else a larger replacement (the old one retired, once the
  // stream's queued work is done; growing from nothing does not wait): workspaces and scratch grow
  // only, on an eager call with a new shape. Throws OutOfMemory naming `what`.
  void* grow(DeviceMemory& m, std::size_t bytes, const char* what);
  // Grow-only scratch of n floats (bias-gradient partial sums, filter-gradient parts): m, or the
  // main stream's own.
  float* scratch_floats(DeviceMemory& m, std::size_t n);
  float* scratch_floats(std::size_t n) { return scratch_floats(scratch_, n); }
  // A convolution's bias gradient (per-channel sums of dy) through partial sums in `scratch` (the
  // main stream's or the side's), on stream s; reserve grows it first, outside any fork.
  void channel_sums_reserve(const ConvGeom& g, DeviceMemory& scratch);
  void channel_sums_into(const ConvGeom& g, const float* dy, float* db, DeviceMemory& scratch,
                         cudaStream_t s);
  // Grow-only scratch for the channels-last (and dense bf16) copies of one op's operands and
  // results (the caller lays its arrays out in it, each rounded up to 128 elements).
  void* nhwc_scratch(std::size_t bytes);
  void dense_forward_into(const float* x, const float* w, const float* b, float* y, int n, int in,
                          int out, bool relu);
  void dense_backward_from(const float* x, const float* w, const float* dy, float* dx, float* dw,
                           float* db, int n, int in, int out, bool relu_input);
  // c (m, n) column-major = op(a) op(b) with bfloat16 a and b, fp32 accumulation and c.
  void gemm_bf16(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* a,
                 int lda, const void* b, int ldb, float* c, int ldc);
  // The channels-last plan with activations in its storage or fp32 NCHW (xs, ys): the latter are
  // converted before and after. kept (conv_kept_bytes): the weights' K,R,S,C copy, then x's when
  // x is fp32 NCHW, written by the forward and read by the backward (null: converted into scratch
  // each time).
  void conv2d_forward_nhwc(const ConvGeom& g, const NhwcConvPlan& plan, Storage xs, const void* x,
                           const float* w, const float* b, Storage ys, void* y, void* kept);
  // our_filter: the weight gradient on our kernel (fp32 NHWC only, ConvEntry::nhwc_our_filter).
  void conv2d_backward_nhwc(const ConvGeom& g, const NhwcConvPlan& plan, Storage xs, const void* x,
                            const void* kept, const float* w, Storage ys, const void* dy, void* dx,
                            float* dw, bool our_filter = false);
  // The fp32 / tf32 plan (or our kernels) on fp32 NCHW tensors.
  void conv2d_forward_fp32(const ConvGeom& g, const ConvEntry& e, const float* x, const float* w,
                           const float* b, float* y);
  void conv2d_backward_fp32(const ConvGeom& g, const ConvEntry& e, const float* x, const float* w,
                            const float* dy, float* dx, float* dw, float* db);
  void require_not_capturing(const char* what) const;
  void retire(DeviceMemory& m);  // frees m, or keeps it for the graph (graph_owned_)
  const StepScalars* dyn() const { return capturing_ ? step_block_.as<StepScalars>() : nullptr; }
  // A recorded graph: the step's, or the evaluation batch's.
  struct Recorded {
    Graph graph;
    GraphExec exec;
    explicit operator bool() const { return graph || exec; }
  };
  // The step's graph starts by taking its replay's slot of the ring; the evaluation's by taking
  // the next offset of its sequence (eval_sequence_), which needs nothing from the host.
  void begin_capture_into(Recorded& r, bool evaluation);
  // Ends a capture in progress, discarding it; forgets r; frees the retired workspaces once no
  // graph is left that may point at them. Never throws.
  void drop(Recorded& r) noexcept;

  int device_;
  MathMode math_;
  bool deterministic_ = false;
  ConvChoice conv_choice_ = ConvChoice::fastest;
  DirectConv direct_conv_ = DirectConv::timed;
  int sm_count_ = 0;  // the SMs our kernels plan for (shared_sm_count, on the first convolution)
  int share_ = 1;
  int tuned_batch_ = 0;  // tune_for_batch
  std::string name_;
  std::size_t workspace_limit_;

  // Declared first, destroyed last: the handles outlive every buffer that work on them uses.
  Stream stream_;
  CublasHandle cublas_;
  CudnnHandle cudnn_;

  DeviceMemory cublas_workspace_;
  DeviceMemory conv_workspace_;  // grown only when a new shape needs more
  DeviceMemory sumsq_partial_;   // (kSumSquaresBlocks) doubles
  DeviceMemory scratch_;         // grown only when a new shape needs more
  DeviceMemory nhwc_scratch_;    // likewise (bf16 and tf32 mode only)
  // fp32 NCHW copies of channels-last activations for a convolution whose shape has no
  // channels-last plan (a partial batch): grown only, like the others.
  DeviceMemory widened_scratch_;
  bool nhwc_activations_ = true;
  // Workspaces replaced while a graph exists: the graph still points at them, so they live until
  // no graph is left (an eager step of a new shape, e.g. a last partial batch, may grow one).
  std::vector<DeviceMemory> graph_owned_;
  std::map<ConvKey, ConvEntry> conv_plans_;
  std::map<std::array<int, 13>, std::unique_ptr<PoolPlan>> pool_plans_;
  std::unordered_set<void*> live_;  // allocate()d and not yet freed: released by the destructor
  bool overlap_ = true;
  std::unique_ptr<Side> side_;

  // Graph capture: a ring of pinned host slots the graph's first kernel reads (by a device-side
  // counter), so the host can write step k+1's scalars while step k still runs.
  static constexpr int kRing = 8;
  bool capturing_ = false;
  DeviceMemory step_block_;       // (1) StepScalars read by captured kernels
  DeviceMemory step_counter_;     // (1) uint64: replays started, advanced by the graph
  PinnedMemory step_ring_;        // (kRing) StepScalars, mapped
  std::vector<Event> ring_done_;  // ring slot k may be rewritten once its replay has started
  std::uint64_t host_replays_ = 0;
  Recorded* capture_into_ = nullptr;  // while capturing_
  Recorded step_graph_, eval_graph_;
  std::uint64_t eval_key_ = 0;  // whose evaluation batch eval_graph_ holds
  DeviceMemory eval_sequence_;  // (2) int64: the next replay's offset, the step between them
};

}  // namespace sweep::trainer::cuda
