/*
 * cudnn_graph.h — channels-last convolutions through cuDNN's graph (backend) API: bf16, and fp32
 * with tf32 tensor cores.
 *
 * The legacy API (cudnn_legacy.h) gives bf16 convolutions one storage type for x, w and y, so a
 * weight gradient comes out in bf16, and its fast algorithms add those gradients with bf16
 * atomics (errors of several percent): only its deterministic algorithms are usable, and they run
 * about as fast as tf32. The graph API takes a type per tensor and offers cuDNN's newer engines
 * (those PyTorch's channels_last runs): here x, w, y, dx and dy are bf16 or fp32 (NHWC, filters
 * K,R,S,C), accumulation is fp32, and the weight gradient is written in fp32 straight into the
 * master gradient's K,C,R,S layout, or in the plan's type in K,R,S,C where that runs faster (bf16,
 * as autocast's: only when more than 25% faster). In tf32 mode this plan on fp32 NHWC tensors is
 * what reaches the tensor cores: for NCHW tensors cudnnFind's fastest are fp32 FMA kernels at
 * our shapes. Engines whose notes say they reduce in reduced precision, or use FFT or
 * Winograd, are never taken. Each op takes the fastest of cuDNN's heuristic candidates, timed in a
 * CUDA graph as a step runs them, once per shape and process (later plans of the shape reuse the
 * choice).
 * The deprecated descriptor API stays in cudnn_legacy.cpp; cudnn_graph.cpp and
 * cudnn_graph_engines.cpp (the descriptors, graphs and candidate plans) are the graph API's only
 * users.
 */
#pragma once

#include <cudnn.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>

#include "trainer/backend/backend.h"

namespace sweep::trainer::cuda {

class NhwcConvPlan {
 public:
  // The weight gradient's form: the faster of fp32 K,C,R,S and the plan's type in K,R,S,C (the
  // default; bf16 only when 25% faster), or one of them (tests).
  enum class FilterGradient { fastest, nchw_fp32, nhwc };
  // storage: the activations' (bf16_nhwc or fp32_nhwc). Throws sweep::Error when cuDNN offers no
  // acceptable engine for one of the three ops within `workspace_limit` bytes. The candidates are
  // timed on the handle's stream (not capturing).
  NhwcConvPlan(cudnnHandle_t handle, const ConvGeom& g, Storage storage,
               std::size_t workspace_limit,
               FilterGradient filter_gradient = FilterGradient::fastest);
  ~NhwcConvPlan();
  NhwcConvPlan(const NhwcConvPlan&) = delete;
  NhwcConvPlan& operator=(const NhwcConvPlan&) = delete;

  Storage storage() const;              // the activations' (bf16_nhwc or fp32_nhwc)
  std::size_t workspace_bytes() const;  // the largest of the three chosen engines' needs
  // Whether backward_filter writes fp32 K,C,R,S (the parameters' own layout); else the plan's
  // type in K,R,S,C.
  bool filter_gradient_nchw() const;
  // Which engines run the three ops, for SWEEP_CUDNN_LOG.
  std::string describe() const;

  // y (NHWC) = conv(x (NHWC), w (K,R,S,C)), all of the plan's type; overwrites y.
  void forward(cudnnHandle_t h, const void* x, const void* w, void* y, void* workspace) const;
  // dx (NHWC) = conv^T(dy (NHWC), w); overwrites dx.
  void backward_data(cudnnHandle_t h, const void* w, const void* dy, void* dx,
                     void* workspace) const;
  // dw = sum over the batch of x (*) dy, in the layout filter_gradient_nchw() says; overwrites.
  void backward_filter(cudnnHandle_t h, const void* x, const void* dy, void* dw,
                       void* workspace) const;

 private:
  // The plans this process chose for the same shape before (a fused array's earlier member),
  // built without timing; false when none.
  bool adopt_choice(cudnnHandle_t h, const ConvGeom& g, std::size_t limit,
                    const std::array<int, 15>& key);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep::trainer::cuda
