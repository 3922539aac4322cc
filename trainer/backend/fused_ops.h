/*
 * fused_ops.h — the optional group of fused ops: a ReLU folded into the op before or after it, and
 * a convolution that pools its own outputs. Each gives the same numbers as the ops it fuses, run
 * one after the other; a backend offers the group by implementing FusedOps (Backend::fused_ops()).
 * Callers go through the free functions below, which run the fused op where the backend offers
 * it and its composition (namespace composed) where it does not; a convolution is planned to pool
 * its outputs only on a backend that offers the group (Conv2d::fuse_maxpool_after).
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "trainer/backend/backend_types.h"

namespace sweep::trainer {

class Backend;

class FusedOps {
 public:
  virtual ~FusedOps() = default;

  // A dense layer whose output feeds a ReLU: y = max(0, x w^T + b), one pass where the backend
  // can (the ReLU's own launch saved); the same numbers as dense_forward then relu_forward.
  virtual void dense_forward_relu(const float* x, const float* w, const float* b, float* y, int n,
                                  int in, int out) = 0;
  // dense_backward for a dense layer whose input x is a ReLU's output: dx (never null) goes on
  // through that ReLU, dx = x > 0 ? dy w : 0, so the ReLU's backward is folded in; the same
  // numbers as dense_backward then relu_backward(x, dx, dx).
  virtual void dense_backward_relu_input(const float* x, const float* w, const float* dy, float* dx,
                                         float* dw, float* db, int n, int in, int out) = 0;

  // Batch norm whose output feeds a ReLU: y = max(0, bn(x)) in one pass where the backend can
  // (the ReLU's launches saved); the same numbers as the batch-norm op then relu_forward.
  virtual void batchnorm_forward_train_relu(const BatchNormGeom& g, const float* x,
                                            const float* gamma, const float* beta,
                                            float* running_mean, float* running_var,
                                            float* save_mean, float* save_invstd, float* y) = 0;
  virtual void batchnorm_forward_infer_relu(const BatchNormGeom& g, const float* x,
                                            const float* gamma, const float* beta,
                                            const float* running_mean, const float* running_var,
                                            float* y) = 0;
  // batchnorm_backward through that ReLU: y = max(0, bn(x)) and dy its gradient; the same numbers
  // as relu_backward(y, dy, dx) then batchnorm_backward with dx as its dy (in place).
  virtual void batchnorm_backward_relu(const BatchNormGeom& g, const float* x, const float* y,
                                       const float* dy, const float* gamma, const float* save_mean,
                                       const float* save_invstd, float* dx, float* dgamma,
                                       float* dbeta) = 0;

  // y = max(0, a + b): a residual block's sum and the ReLU after it, in one pass where the backend
  // can; the same numbers as add then relu_forward.
  virtual void add_relu(const float* a, const float* b, float* y, std::size_t n) = 0;

  // 2x2 max pooling of stride 2 (is_2x2_stride2) that also keeps, per window, which element the
  // backward routes dy to: a byte, 0-3 in row-major order (the first equal to the maximum), 4 when
  // none is (a window holding a NaN). Its backward then reads those bytes and dy, not x and y:
  // the same dx as pool_backward (every element written, a trailing odd row or column zero).
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
};

// The ReLU folds as the required ops they fuse, one after the other: what a backend without a
// faster fold runs (the CPU backend's FusedOps, and every caller on a backend without the group).
namespace composed {
void dense_forward_relu(Backend& b, const float* x, const float* w, const float* bias, float* y,
                        int n, int in, int out);
void dense_backward_relu_input(Backend& b, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db, int n, int in, int out);
void batchnorm_forward_train_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, float* running_mean,
                                  float* running_var, float* save_mean, float* save_invstd,
                                  float* y);
void batchnorm_forward_infer_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, const float* running_mean,
                                  const float* running_var, float* y);
void batchnorm_backward_relu(Backend& b, const BatchNormGeom& g, const float* x, const float* y,
                             const float* dy, const float* gamma, const float* save_mean,
                             const float* save_invstd, float* dx, float* dgamma, float* dbeta);
void add_relu(Backend& b, const float* a, const float* c, float* y, std::size_t n);
}  // namespace composed

// The ReLU folds on any backend: its FusedOps where it offers them, else namespace composed.
void dense_forward_relu(Backend& b, const float* x, const float* w, const float* bias, float* y,
                        int n, int in, int out);
void dense_backward_relu_input(Backend& b, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db, int n, int in, int out);
void batchnorm_forward_train_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, float* running_mean,
                                  float* running_var, float* save_mean, float* save_invstd,
                                  float* y);
void batchnorm_forward_infer_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, const float* running_mean,
                                  const float* running_var, float* y);
void batchnorm_backward_relu(Backend& b, const BatchNormGeom& g, const float* x, const float* y,
                             const float* dy, const float* gamma, const float* save_mean,
                             const float* save_invstd, float* dx, float* dgamma, float* dbeta);
void add_relu(Backend& b, const float* a, const float* c, float* y, std::size_t n);

}  // namespace sweep::trainer
