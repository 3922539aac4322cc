/*
 * required_only_backend.h — a backend that offers the required ops and no optional group: each op
 * forwarded to a CpuBackend it holds. What a new backend's first version looks like; a network on
 * it runs every caller's path for a backend without FusedOps, ChannelsLastOps, GraphCapture and
 * ShapeTuning, which the tests compare with the same network on the CPU backend itself.
 */
#pragma once

#include <string>

#include "trainer/backend/backend.h"
#include "trainer/cpu/cpu_backend.h"

namespace sweep::trainer::testing {

class RequiredOnlyBackend final : public Backend {
 public:
  explicit RequiredOnlyBackend(int threads) : cpu_(threads) {}

  DeviceKind kind() const override { return cpu_.kind(); }
  std::string name() const override { return "required ops only over " + cpu_.name(); }
  void* allocate(std::size_t bytes) override { return cpu_.allocate(bytes); }
  void deallocate(void* p) noexcept override { cpu_.deallocate(p); }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override {
    cpu_.copy_to_device(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override {
    cpu_.copy_to_host(dst, src, bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override { cpu_.copy(dst, src, bytes); }
  void fill(float* x, std::size_t n, float value) override { cpu_.fill(x, n, value); }
  void synchronize() override { cpu_.synchronize(); }
  void dense_forward(const float* x, const float* w, const float* b, float* y, int n, int in,
                     int out) override {
    cpu_.dense_forward(x, w, b, y, n, in, out);
  }
  void dense_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                      float* db, int n, int in, int out) override {
    cpu_.dense_backward(x, w, dy, dx, dw, db, n, in, out);
  }
  void conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                      float* y) override {
    cpu_.conv2d_forward(g, x, w, b, y);
  }
  void conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                       float* dx, float* dw, float* db) override {
    cpu_.conv2d_backward(g, x, w, dy, dx, dw, db);
  }
  void pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) override {
    cpu_.pool_forward(g, mode, x, y);
  }
  void pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                     const float* dy, float* dx) override {
    cpu_.pool_backward(g, mode, x, y, dy, dx);
  }
  void relu_forward(const float* x, float* y, std::size_t n) override {
    cpu_.relu_forward(x, y, n);
  }
  void relu_backward(const float* y, const float* dy, float* dx, std::size_t n) override {
    cpu_.relu_backward(y, dy, dx, n);
  }
  void batchnorm_forward_train(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, float* running_mean, float* running_var,
                               float* save_mean, float* save_invstd, float* y) override {
    cpu_.batchnorm_forward_train(g, x, gamma, beta, running_mean, running_var, save_mean,
                                 save_invstd, y);
  }
  void batchnorm_forward_infer(const BatchNormGeom& g, const float* x, const float* gamma,
                               const float* beta, const float* running_mean,
                               const float* running_var, float* y) override {
    cpu_.batchnorm_forward_infer(g, x, gamma, beta, running_mean, running_var, y);
  }
  void batchnorm_backward(const BatchNormGeom& g, const float* x, const float* dy,
                          const float* gamma, const float* save_mean, const float* save_invstd,
                          float* dx, float* dgamma, float* dbeta) override {
    cpu_.batchnorm_backward(g, x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
  }
  void dropout_forward(const float* x, float* y, float* mask, std::size_t n, float p,
                       std::uint64_t seed, std::uint64_t counter) override {
    cpu_.dropout_forward(x, y, mask, n, p, seed, counter);
  }
  void mul(const float* a, const float* b, float* y, std::size_t n) override {
    cpu_.mul(a, b, y, n);
  }
  void add(const float* a, const float* b, float* y, std::size_t n) override {
    cpu_.add(a, b, y, n);
  }
  using Backend::softmax_cross_entropy;
  void softmax_cross_entropy(const float* logits, const std::int32_t* labels, int n, int classes,
                             float* dlogits, double* stats, int mean_over) override {
    cpu_.softmax_cross_entropy(logits, labels, n, classes, dlogits, stats, mean_over);
  }
  void mean_squared_error(const float* pred, const float* targets, int n, float* dpred,
                          double* stats, int mean_over) override {
    cpu_.mean_squared_error(pred, targets, n, dpred, stats, mean_over);
  }
  void argmax(const float* logits, int n, int classes, std::int32_t* pred) override {
    cpu_.argmax(logits, n, classes, pred);
  }
  void sum_squares(const float* x, std::size_t n, double* out) override {
    cpu_.sum_squares(x, n, out);
  }
  void clip_scale(const double* sumsq, float max_norm, float* scale) override {
    cpu_.clip_scale(sumsq, max_norm, scale);
  }
  void optimizer_step(const OptimizerStep& s, float* params, const float* grads, float* state1,
                      float* state2, std::size_t n, const float* grad_scale) override {
    cpu_.optimizer_step(s, params, grads, state1, state2, n, grad_scale);
  }
  void gather_batch(const GatherDesc& d, float* x, void* y) override { cpu_.gather_batch(d, x, y); }

 private:
  CpuBackend cpu_;
};

}  // namespace sweep::trainer::testing
