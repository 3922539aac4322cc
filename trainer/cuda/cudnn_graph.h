/*
 * cudnn_graph.h — bf16 convolutions through cuDNN's graph (backend) API.
 *
 * The legacy API (cudnn_legacy.h) gives bf16 convolutions one storage type for x, w and y, so a
 * weight gradient comes out in bf16, and its fast algorithms add those gradients with bf16
 * atomics (3-4% errors, measured): only its deterministic algorithms were usable, and they ran
 * about as fast as tf32. The graph API takes a type per tensor and offers cuDNN's newer engines
 * (those PyTorch's channels_last bf16 runs): here x, w, y, dx and dy are bf16 (NHWC, filters
 * K,R,S,C), accumulation is fp32, and the weight gradient is written in fp32 straight into the
 * master gradient's K,C,R,S layout, or in bf16 K,R,S,C (as autocast's) where that runs more than
 * 25% faster. Engines whose notes say they reduce in reduced precision, or use FFT or Winograd,
 * are never taken. Each op takes the fastest of cuDNN's heuristic candidates, timed in a CUDA
 * graph as a step runs them, once per shape and process (later plans of the shape reuse the
 * choice).
 * The deprecated descriptor API stays in cudnn_legacy.cpp; this file is the graph API's only user.
 */
#pragma once

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "trainer/backend.h"

namespace sweep::trainer::cuda {

class Bf16ConvPlan {
 public:
  // The weight gradient's type: fp32 unless bf16 runs more than 25% faster (the default), or one
  // of them (tests).
  enum class FilterGradient { fastest, fp32, bf16 };
  // Throws sweep::Error when cuDNN offers no acceptable engine for one of the three ops within
  // `workspace_limit` bytes. The candidates are timed on the handle's stream (not capturing).
  Bf16ConvPlan(cudnnHandle_t handle, const ConvGeom& g, std::size_t workspace_limit,
               FilterGradient filter_gradient = FilterGradient::fastest);
  ~Bf16ConvPlan();
  Bf16ConvPlan(const Bf16ConvPlan&) = delete;
  Bf16ConvPlan& operator=(const Bf16ConvPlan&) = delete;

  std::size_t workspace_bytes() const;  // the largest of the three chosen engines' needs
  // Whether backward_filter writes fp32 K,C,R,S (the parameters' own layout); else bf16 K,R,S,C.
  bool filter_gradient_fp32() const;
  // Which engines run the three ops, for SWEEP_CUDNN_LOG.
  std::string describe() const;

  // y (bf16 NHWC) = conv(x (bf16 NHWC), w (bf16 K,R,S,C)); overwrites y.
  void forward(cudnnHandle_t h, const void* x, const void* w, void* y, void* workspace) const;
  // dx (bf16 NHWC) = conv^T(dy (bf16 NHWC), w); overwrites dx.
  void backward_data(cudnnHandle_t h, const void* w, const void* dy, void* dx,
                     void* workspace) const;
  // dw = sum over the batch of x (*) dy, in the layout filter_gradient_fp32() says; overwrites.
  void backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw,
                       void* workspace) const;

 private:
  // The plans this process chose for the same shape before (a fused array's earlier member),
  // built without timing; false when none.
  bool adopt_choice(cudnnHandle_t h, const ConvGeom& g, std::size_t limit,
                    const std::array<int, 14>& key);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep::trainer::cuda
