/*
 * cudnn_legacy.cpp — the one file that calls cuDNN's deprecated descriptor API.
 *
 * Deprecation warnings are silenced here and nowhere else (cuDNN only emits them when
 * CUDNN_WARN_DEPRECATED is defined; the pragma covers a build that defines it). Algorithms are
 * timed by cudnnFind once per shape and process (PyTorch's benchmark mode), or, for shapes that
 * run rarely (a partial batch), taken from cudnnGet*Algorithm_v7, cuDNN's heuristics, which cost
 * no device time. With fp32 precision the descriptors ask for
 * CUDNN_FMA_MATH and candidates that would convert to TF32 are skipped, because cuDNN's default
 * math lets fp32 convolutions run in TF32 on Hopper (about 1e-3 relative error). bf16
 * convolutions go through the graph API (cudnn_graph.h): here one storage type serves x, w and y,
 * so a weight gradient would come out in bf16.
 */
#undef CUDNN_WARN_DEPRECATED
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "trainer/cuda/cudnn_legacy.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/check.h"
#include "trainer/cuda/tuning_fingerprint.h"

namespace sweep::trainer::cuda {

namespace {

// A descriptor created on construction and destroyed with its owner, so a setter that throws
// half-way through a plan's construction leaks nothing.
template <class T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Desc {
 public:
  Desc() { SWEEP_CHECK_CUDNN(Create(&d_)); }
  ~Desc() { SWEEP_LOG_ON_ERROR(Destroy(d_) == CUDNN_STATUS_SUCCESS, "cudnnDestroy*Descriptor"); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  T get() const { return d_; }

 private:
  T d_ = nullptr;
};

using TensorDesc =
    Desc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc =
    Desc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc = Desc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                      cudnnDestroyConvolutionDescriptor>;
using PoolDesc =
    Desc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

void set_tensor(const TensorDesc& d, int n, int c, int h, int w) {
  SWEEP_CHECK_CUDNN(
      cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
}

bool math_allowed(cudnnMathType_t m, MathMode mode) {
  if (mode != MathMode::fp32) return true;
  return m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

// FFT and non-fused Winograd algorithms lose digits (errors of a percent on a small weight
// gradient in fp32). With fp32 they are never chosen; tf32 accepts them.
bool lossy(cudnnConvolutionFwdAlgo_t a) {
  return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool lossy(cudnnConvolutionBwdDataAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool lossy(cudnnConvolutionBwdFilterAlgo_t a) {
  return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
         a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

// From results ordered best first (by measured time from Find, by prediction from the
// heuristics): the fastest acceptable one, unless a deterministic acceptable one is within 10% of
// its time (deterministic algorithms make a seeded trial reproducible run to run; on Hopper the
// only deterministic weight-gradient algorithm is often several times slower, so speed wins).
template <class Perf>
const Perf* pick(const std::vector<Perf>& perf, int returned, MathMode mode, std::size_t limit,
                 bool deterministic) {
  const Perf* fastest = nullptr;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = perf[i];
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > limit || !math_allowed(p.mathType, mode))
      continue;
    if (mode != MathMode::tf32 && lossy(p.algo)) continue;
    if (deterministic && p.determinism != CUDNN_DETERMINISTIC) continue;
    if (!fastest) fastest = &p;
    if (p.determinism == CUDNN_DETERMINISTIC && p.time <= 1.1f * fastest->time) return &p;
  }
  return fastest;
}

template <class Perf>
const Perf& pick_or_throw(const std::vector<Perf>& found, int found_count,
                          const std::vector<Perf>& predicted, int predicted_count, MathMode mode,
                          std::size_t limit, bool deterministic, const char* what) {
  if (const Perf* p = pick(found, found_count, mode, limit, deterministic)) return *p;
  if (const Perf* p = pick(predicted, predicted_count, mode, limit, deterministic)) return *p;
  throw Error(std::string("cuDNN offers no ") + (deterministic ? "deterministic " : "") + what +
              " algorithm for this convolution within a " + std::to_string(limit >> 20) +
              " MiB workspace" +
              (deterministic ? " (training.deterministic: false allows the others)" : ""));
}

const float kOne = 1.f, kZero = 0.f;

}  // namespace

// ------------------------------------------------------------------------------------ conv

struct ConvPlan::Impl {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv_fwd, conv_bwd_data, conv_bwd_filter;  // math type is per algorithm choice
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  std::size_t workspace = 0;
  MathMode math = MathMode::fp32;
  float ms = 0;
};

namespace {

// What is chosen for one convolution shape. Find times every algorithm on the device (a few
// milliseconds per shape), so its outcome is cached for the process, and kept in the tuning cache
// for later processes on the machine: every later trial with the same shapes on the same device
// reuses it (and a sweep's trials mostly share shapes).
struct Choice {
  cudnnConvolutionFwdAlgo_t fwd;
  cudnnConvolutionBwdDataAlgo_t bwd_data;
  cudnnConvolutionBwdFilterAlgo_t bwd_filter;
  cudnnMathType_t fwd_math, bwd_data_math, bwd_filter_math;
  std::size_t workspace;
  float ms;  // Find's time for the three, summed; infinity when one came from the heuristics
};

using ChoiceKey = std::array<long long, 17>;

struct ConvDescs {
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t fwd, bwd_data, bwd_filter;
};

// untimed: cuDNN's heuristics alone (no device time; for a shape that runs once an epoch);
// deterministic_untimed: the same, deterministic algorithms only.
Choice choose(cudnnHandle_t h, const ConvDescs& p, const ConvGeom& g, MathMode math,
              std::size_t limit, ConvPlan::Choose how) {
  const bool find = how == ConvPlan::Choose::timed;
  const bool deterministic = how == ConvPlan::Choose::deterministic_untimed;
  static std::mutex mutex;
  static std::map<ChoiceKey, Choice> cache;
  int device = 0;
  SWEEP_CHECK_CUDA(cudaGetDevice(&device));
  const ChoiceKey key{device,     g.n,        g.c,       g.h,
                      g.w,        g.k,        g.r,       g.s,
                      g.stride_h, g.stride_w, g.pad_h,   g.pad_w,
                      g.out_h,    g.out_w,    int(math), static_cast<long long>(limit),
                      int(how)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  // What Find chose in an earlier process on this machine (trainer/backend/tuning_cache.h): the
  // same cuDNN on the same GPU, so the same algorithms exist.
  if (find)
    if (const auto kept = kept_choice(device, "cudnn_conv", choice_key(key));
        kept && kept->size() == 8) {
      const std::vector<double>& v = *kept;
      const Choice c{cudnnConvolutionFwdAlgo_t(int(v[0])),
                     cudnnConvolutionBwdDataAlgo_t(int(v[1])),
                     cudnnConvolutionBwdFilterAlgo_t(int(v[2])),
                     cudnnMathType_t(int(v[3])),
                     cudnnMathType_t(int(v[4])),
                     cudnnMathType_t(int(v[5])),
                     std::size_t(v[6]),
                     float(v[7])};
      std::lock_guard<std::mutex> lock(mutex);
      return cache.emplace(key, c).first->second;
    }
  const cudnnFilterDescriptor_t wd = p.w;
  int count = 0, found = 0, predicted = 0;

  SWEEP_CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ff(count), fh(count);
  if (find)
    SWEEP_CHECK_CUDNN(
        cudnnFindConvolutionForwardAlgorithm(h, p.x, wd, p.fwd, p.y, count, &found, ff.data()));
  SWEEP_CHECK_CUDNN(
      cudnnGetConvolutionForwardAlgorithm_v7(h, p.x, wd, p.fwd, p.y, count, &predicted, fh.data()));
  const auto& f = pick_or_throw(ff, found, fh, predicted, math, limit, deterministic, "forward");

  SWEEP_CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> df(count), dh(count);
  if (find)
    SWEEP_CHECK_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(h, wd, p.y, p.bwd_data, p.x, count,
                                                                &found, df.data()));
  SWEEP_CHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, wd, p.y, p.bwd_data, p.x, count,
                                                                &predicted, dh.data()));
  const auto& d =
      pick_or_throw(df, found, dh, predicted, math, limit, deterministic, "backward-data");

  SWEEP_CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> wf(count), wh(count);
  if (find)
    SWEEP_CHECK_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(h, p.x, p.y, p.bwd_filter, wd,
                                                                  count, &found, wf.data()));
  SWEEP_CHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p.x, p.y, p.bwd_filter, wd,
                                                                  count, &predicted, wh.data()));
  const auto& w =
      pick_or_throw(wf, found, wh, predicted, math, limit, deterministic, "backward-filter");

  // Chosen from Find's list (measured), not the heuristics' fallback list (predicted)?
  const auto measured = [](const auto& chosen, const auto& list) {
    return &chosen >= list.data() && &chosen < list.data() + list.size() && chosen.time >= 0;
  };
  const bool timed = measured(f, ff) && measured(d, df) && measured(w, wf);
  const Choice c{f.algo,
                 d.algo,
                 w.algo,
                 f.mathType,
                 d.mathType,
                 w.mathType,
                 std::max({f.memory, d.memory, w.memory}),
                 timed ? f.time + d.time + w.time : std::numeric_limits<float>::infinity()};
  if (find && timed)
    keep_choice(device, "cudnn_conv", choice_key(key),
                std::vector<double>{double(c.fwd), double(c.bwd_data), double(c.bwd_filter),
                                    double(c.fwd_math), double(c.bwd_data_math),
                                    double(c.bwd_filter_math), double(c.workspace), double(c.ms)});
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, c);
  return c;
}

void set_conv(const ConvDesc& d, const ConvGeom& g, MathMode mode) {
  // The compute (accumulation) type is fp32 in both modes.
  SWEEP_CHECK_CUDNN(cudnnSetConvolution2dDescriptor(d.get(), g.pad_h, g.pad_w, g.stride_h,
                                                    g.stride_w, 1, 1, CUDNN_CROSS_CORRELATION,
                                                    CUDNN_DATA_FLOAT));
  const cudnnMathType_t math =
      mode == MathMode::tf32 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION : CUDNN_FMA_MATH;
  SWEEP_CHECK_CUDNN(cudnnSetConvolutionMathType(d.get(), math));
}

}  // namespace

ConvPlan::ConvPlan(cudnnHandle_t h, const ConvGeom& g, MathMode math, std::size_t limit, Choose how)
    : impl_(std::make_unique<Impl>()) {
  if (math == MathMode::bf16) throw Error("conv2d: bf16 convolutions take an NhwcConvPlan");
  Impl& p = *impl_;
  set_tensor(p.x, g.n, g.c, g.h, g.w);
  set_tensor(p.y, g.n, g.k, g.out_h, g.out_w);
  const cudnnFilterDescriptor_t wd = p.w.get();
  SWEEP_CHECK_CUDNN(
      cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, g.k, g.c, g.r, g.s));
  p.math = math;
  set_conv(p.conv_fwd, g, math);
  set_conv(p.conv_bwd_data, g, math);
  set_conv(p.conv_bwd_filter, g, math);

  int on = 0, oc = 0, oh = 0, ow = 0;
  SWEEP_CHECK_CUDNN(
      cudnnGetConvolution2dForwardOutputDim(p.conv_fwd.get(), p.x.get(), wd, &on, &oc, &oh, &ow));
  if (on != g.n || oc != g.k || oh != g.out_h || ow != g.out_w)
    throw Error("conv2d: geometry gives output " + std::to_string(g.out_h) + "x" +
                std::to_string(g.out_w) + " but cuDNN computes " + std::to_string(oh) + "x" +
                std::to_string(ow));

  const ConvDescs descs{
      p.x.get(), p.y.get(), wd, p.conv_fwd.get(), p.conv_bwd_data.get(), p.conv_bwd_filter.get()};
  const Choice c = choose(h, descs, g, math, limit, how);
  p.fwd = c.fwd;
  p.bwd_data = c.bwd_data;
  p.bwd_filter = c.bwd_filter;
  if (math != MathMode::fp32) {  // fp32 keeps FMA math: DEFAULT would allow TF32
    SWEEP_CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv_fwd.get(), c.fwd_math));
    SWEEP_CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv_bwd_data.get(), c.bwd_data_math));
    SWEEP_CHECK_CUDNN(cudnnSetConvolutionMathType(p.conv_bwd_filter.get(), c.bwd_filter_math));
  }
  p.workspace = c.workspace;
  p.ms = c.ms;
  if (std::getenv("SWEEP_CUDNN_LOG"))
    std::fprintf(stderr,
                 "sweep: conv n%d c%d %dx%d k%d %dx%d s%d p%d %s: fwd algo %d, bwd-data algo %d, "
                 "bwd-filter algo %d, workspace %zu bytes, %.3f ms\n",
                 g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.stride_h, g.pad_h,
                 math == MathMode::tf32 ? "tf32" : "fp32", int(c.fwd), int(c.bwd_data),
                 int(c.bwd_filter), c.workspace, double(c.ms));
}

ConvPlan::~ConvPlan() = default;

std::size_t ConvPlan::workspace_bytes() const { return impl_->workspace; }
MathMode ConvPlan::math() const { return impl_->math; }
float ConvPlan::measured_ms() const { return impl_->ms; }

void ConvPlan::forward(cudnnHandle_t h, const void* x, const void* w, void* y,
                       void* workspace) const {
  const Impl& p = *impl_;
  SWEEP_CHECK_CUDNN(cudnnConvolutionForward(h, &kOne, p.x.get(), x, p.w.get(), w, p.conv_fwd.get(),
                                            p.fwd, workspace, p.workspace, &kZero, p.y.get(), y));
}

void ConvPlan::backward_data(cudnnHandle_t h, const void* w, const void* dy, void* dx,
                             void* workspace) const {
  const Impl& p = *impl_;
  SWEEP_CHECK_CUDNN(cudnnConvolutionBackwardData(h, &kOne, p.w.get(), w, p.y.get(), dy,
                                                 p.conv_bwd_data.get(), p.bwd_data, workspace,
                                                 p.workspace, &kZero, p.x.get(), dx));
}

void ConvPlan::backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw,
                               void* workspace) const {
  const Impl& p = *impl_;
  SWEEP_CHECK_CUDNN(cudnnConvolutionBackwardFilter(h, &kOne, p.x.get(), x, p.y.get(), dy,
                                                   p.conv_bwd_filter.get(), p.bwd_filter, workspace,
                                                   p.workspace, &kZero, p.w.get(), dw));
}

// ------------------------------------------------------------------------------------ pool

struct PoolPlan::Impl {
  TensorDesc x, y;
  PoolDesc pool;
};

PoolPlan::PoolPlan(const PoolGeom& g, PoolMode mode) : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  set_tensor(p.x, g.n, g.c, g.h, g.w);
  set_tensor(p.y, g.n, g.c, g.out_h, g.out_w);
  // MAX_DETERMINISTIC: backward routes each window's gradient to one maximum, in a fixed way.
  const cudnnPoolingMode_t m = mode == PoolMode::max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                                     : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  SWEEP_CHECK_CUDNN(cudnnSetPooling2dDescriptor(p.pool.get(), m, CUDNN_PROPAGATE_NAN, g.kh, g.kw,
                                                g.pad_h, g.pad_w, g.stride_h, g.stride_w));
  int on = 0, oc = 0, oh = 0, ow = 0;
  SWEEP_CHECK_CUDNN(cudnnGetPooling2dForwardOutputDim(p.pool.get(), p.x.get(), &on, &oc, &oh, &ow));
  if (oh != g.out_h || ow != g.out_w)
    throw Error("pool: geometry gives output " + std::to_string(g.out_h) + "x" +
                std::to_string(g.out_w) + " but cuDNN computes " + std::to_string(oh) + "x" +
                std::to_string(ow));
}

PoolPlan::~PoolPlan() = default;

void PoolPlan::forward(cudnnHandle_t h, const float* x, float* y) const {
  const Impl& p = *impl_;
  SWEEP_CHECK_CUDNN(
      cudnnPoolingForward(h, p.pool.get(), &kOne, p.x.get(), x, &kZero, p.y.get(), y));
}

void PoolPlan::backward(cudnnHandle_t h, const float* x, const float* y, const float* dy,
                        float* dx) const {
  const Impl& p = *impl_;
  SWEEP_CHECK_CUDNN(cudnnPoolingBackward(h, p.pool.get(), &kOne, p.y.get(), y, p.y.get(), dy,
                                         p.x.get(), x, &kZero, p.x.get(), dx));
}

}  // namespace sweep::trainer::cuda

#pragma GCC diagnostic pop
