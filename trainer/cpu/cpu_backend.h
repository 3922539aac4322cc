/*
 * cpu_backend.h — the Backend on the host: OpenBLAS for matrix products, oneTBB for the loops.
 *
 * The one decision: oneTBB owns every thread. OpenBLAS is switched to one thread and each TBB task
 * calls sgemm on its own slice (a slice of the batch, or of the output rows), all inside this
 * backend's own task_arena. So a backend built with `threads = k` really uses k cores, two trials
 * in two CPU slots do not oversubscribe, and nothing nests OpenBLAS threads inside TBB threads.
 * Reductions split the work into a fixed number of slices that do not depend on the thread count
 * and combine them in a fixed order, so results are bitwise reproducible run to run (and the same
 * for any thread count). Thread safety: one backend per trial; a backend's ops must not be called
 * from two threads at once (they share its cached scratch), while separate backends run freely in
 * parallel.
 */
#pragma once

#include <tbb/task_arena.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/backend/fused_ops.h"
#include "trainer/backend/nhwc_reference.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {

// The groups it offers: FusedOps (the ReLU folds as the ops they fuse, the pooling with its argmax
// and its convolution), ChannelsLastOps through NhwcReference (tests: see set_nhwc_storage).
class CpuBackend final : public Backend, public FusedOps, public NhwcReference {
 public:
  explicit CpuBackend(int threads = 0);  // 0: all cores
  ~CpuBackend() override;

  DeviceKind kind() const override { return DeviceKind::cpu; }
  std::string name() const override;
  int threads() const { return threads_; }

  void* allocate(std::size_t bytes) override;
  void deallocate(void* p) noexcept override;
  void copy_to_device(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void fill(float* x, std::size_t n, float value) override;
  void synchronize() override {}

  void dense_forward(const float* x, const float* w, const float* b, float* y, int n, int in,
                     int out) override;
  void dense_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                      float* db, int n, int in, int out) override;

  void conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                      float* y) override;
  void conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                       float* dx, float* dw, float* db) override;

  void pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) override;
  void pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                     const float* dy, float* dx) override;

  // FusedOps: the pooling keeping its argmax and the convolution pooling its outputs are ops of
  // their own (cpu_pool.cpp); the ReLU folds are the ops they fuse, one after the other.
  void maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                 std::uint8_t* argmax) override;
  void maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax, const float* dy,
                                  float* dx) override;
  void conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w, const float* b,
                                 float* y, float* pooled, std::uint8_t* argmax) override;
  void dense_forward_relu(const float* x, const float* w, const float* b, float* y, int n, int in,
                          int out) override {
    composed::dense_forward_relu(*this, x, w, b, y, n, in, out);
  }
  void dense_backward_relu_input(const float* x, const float* w, const float* dy, float* dx,
                                 float* dw, float* db, int n, int in, int out) override {
    composed::dense_backward_relu_input(*this, x, w, dy, dx, dw, db, n, in, out);
  }
  void batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x, const float* gamma,
                                    const float* beta, float* running_mean, float* running_var,
                                    float* save_mean, float* save_invstd, float* y) override {
    composed::batchnorm_forward_train_relu(*this, g, x, gamma, beta, running_mean, running_var,
                                           save_mean, save_invstd, y);
  }
  void batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x, const float* gamma,
                                    const float* beta, const float* running_mean,
                                    const float* running_var, float* y) override {
    composed::batchnorm_forward_infer_relu(*this, g, x, gamma, beta, running_mean, running_var, y);
  }
  void batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                               const float* dy, const float* gamma, const float* save_mean,
                               const float* save_invstd, float* dx, float* dgamma,
                               float* dbeta) override {
    composed::batchnorm_backward_relu(*this, g, x, y, dy, gamma, save_mean, save_invstd, dx, dgamma,
                                      dbeta);
  }
  void add_relu(const float* a, const float* b, float* y, std::size_t n) override {
    composed::add_relu(*this, a, b, y, n);
  }

  void relu_forward(const float* x, float* y, std::size_t n) override;
  void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) override;

  // Tests: keep channels-last activations (bf16_nhwc or fp32_nhwc; fp32_nchw: none, the default)
  // as the CUDA backend does in bf16 and tf32 mode, through the reference ops
  // (NhwcReference), so that a network's storage plan runs in CI.
  void set_nhwc_storage(Storage s) { nhwc_storage_ = s; }
  Storage nhwc_storage() const override { return nhwc_storage_; }
  void to_storage(Storage s, const float* x, void* y, int n, int c, int hw) override;
  void from_storage(Storage s, const void* x, float* y, int n, int c, int hw) override;

  void batchnorm_forward_train(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, float* running_mean, float* running_var,
                               float* save_mean, float* save_invstd, float* y) override;
  void batchnorm_forward_infer(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, const float* running_mean,
                               const float* running_var, float* y) override;
  void batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                          const float* gamma, const float* save_mean, const float* save_invstd,
                          float* dx, float* dgamma, float* dbeta) override;

  void dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                       std::uint64_t seed, std::uint64_t counter) override;
  void mul(const float* a, const float* b, float* y, std::size_t n) override;
  void add(const float* a, const float* b, float* y, std::size_t n) override;

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

 private:
  Storage nhwc_storage_ = Storage::fp32_nchw;
  // Runs f inside this backend's arena, so the tbb::parallel_for calls in f use its threads only;
  // with one thread, on the calling thread without TBB (parallel.h's SerialScope): the arena is
  // then never initialised.
  template <class F>
  void run(F&& f) {
    if (threads_ == 1) {
      cpu::SerialScope serial;
      f();
    } else {
      arena_.execute(f);
    }
  }
  // Grow-only scratch areas (call outside parallel code): once a training step's shapes have been
  // seen, no op allocates again. `thread_scratch` has one slot of `per_slot` floats per arena
  // thread, indexed by cpu::thread_slot().
  float* thread_scratch(std::size_t per_slot);
  float* slice_scratch(std::size_t floats);
  double* double_scratch(std::size_t n);

  int threads_;
  tbb::task_arena arena_;
  std::vector<float> thread_scratch_, slice_scratch_;
  std::vector<double> double_scratch_;
};

}  // namespace sweep::trainer
