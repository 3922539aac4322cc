/*
 * cudnn_legacy.h — our own narrow interface over cuDNN's legacy (descriptor) API.
 *
 * cuDNN 9 marks the descriptor API deprecated; it still works and is what every framework calls.
 * The deprecated names (descriptor types, cudnnConvolutionForward, the pooling calls, ...) are
 * used in cudnn_legacy.cu ALONE, behind the pimpl classes below, so the rest of the backend never
 * sees them and a later move to the graph API (cudnn_graph.h) touches one file. A plan is built
 * once per shape (descriptors, chosen algorithms, workspace size) and then only executed, which
 * keeps descriptor set-up off the launch-bound hot path and makes the step capturable.
 */
#pragma once

#include <cudnn.h>

#include <cstddef>
#include <memory>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

// fp32: IEEE fp32 products (no tensor-core conversion). tf32: fp32 data, TF32 tensor-core products
// (about 1e-3 relative error). bf16: convolutions run on bfloat16 copies of their operands with
// fp32 accumulation (cudnn_graph.h; the backend converts, see cuda_conv_nhwc.cu), dense products in
// cuBLAS' FAST_16BF mode; parameters, optimizer state and activations between layers stay fp32 (the
// "fp32 master weights" of mixed precision, as PyTorch's bf16 autocast).
enum class MathMode { fp32, tf32, bf16 };

// Convolution: descriptors and the algorithms chosen for forward, backward data and backward
// filter: the fastest one cudnnFind measures (or, without find, cuDNN's heuristics predict) whose
// workspace fits `workspace_limit`. math is fp32 or tf32 (bf16: NhwcConvPlan, cudnn_graph.h);
// tensors are float NCHW, filters K,C,R,S.
class ConvPlan {
 public:
  // timed: time every algorithm with cudnnFind (a few ms per shape, once per process) and take
  // the fastest; untimed: cuDNN's heuristics alone, for shapes that run rarely (a partial batch);
  // deterministic_untimed: the heuristics' best deterministic algorithms (the same choice in
  // every process, and the same numbers run to run).
  enum class Choose { timed, untimed, deterministic_untimed };
  ConvPlan(cudnnHandle_t handle, const ConvGeom& g, MathMode math, std::size_t workspace_limit,
           Choose how = Choose::timed);
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  std::size_t workspace_bytes() const;  // the largest of the three algorithms' needs
  MathMode math() const;
  // cudnnFind's times of the three chosen algorithms, summed (ms); infinity when any of them was
  // chosen by the heuristics instead.
  float measured_ms() const;
  // y (N,K,OH,OW) = conv(x (N,C,H,W), w (K,C,R,S)); overwrites y.
  void forward(cudnnHandle_t h, const void* x, const void* w, void* y, void* workspace) const;
  // dx (N,C,H,W) = conv^T(dy (N,K,OH,OW), w); overwrites dx.
  void backward_data(cudnnHandle_t h, const void* w, const void* dy, void* dx,
                     void* workspace) const;
  // dw (K,C,R,S) = sum over the batch of x (*) dy; overwrites dw.
  void backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw,
                       void* workspace) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Pooling (max: padding never wins, ties route to one element; average: padded zeros counted).
class PoolPlan {
 public:
  PoolPlan(const PoolGeom& g, PoolMode mode);
  ~PoolPlan();
  PoolPlan(const PoolPlan&) = delete;
  PoolPlan& operator=(const PoolPlan&) = delete;
  void forward(cudnnHandle_t h, const float* x, float* y) const;
  void backward(cudnnHandle_t h, const float* x, const float* y, const float* dy, float* dx) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep::trainer::cuda
