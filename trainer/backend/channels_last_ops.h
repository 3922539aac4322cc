/*
 * channels_last_ops.h — the optional group of ops on activations kept channels-last.
 *
 * A backend may keep the tensors between layers that take them channels-last ((N, H, W, C),
 * channels contiguous) instead of fp32 NCHW, in the storage nhwc_storage() names: bf16 (CUDA in
 * bf16 mode: half the bytes, and no conversion around each bf16 convolution) or fp32 (CUDA in tf32
 * mode: cuDNN's tf32 tensor-core convolutions want channels-last, and transpose NCHW tensors before
 * and after themselves). Which tensors are is planned once per network
 * (trainer/layers/storage_plan.h) from kept_storage() and conv_reads_nhwc() / conv_writes_nhwc().
 * The ops below take the storage of their activations (bf16_nhwc or fp32_nhwc), compute in fp32 and
 * round each bf16 output once (to nearest even, as __float2bfloat16_rn); their reference, which
 * every backend can run, converts the operands to fp32 NCHW, runs the fp32 op and converts the
 * results back (NhwcReference, nhwc_reference.h). Parameters, their gradients and batch-norm
 * statistics stay fp32 (float*).
 *
 * A backend offers the group by implementing ChannelsLastOps (Backend::channels_last_ops()); on a
 * backend without it every activation is fp32 NCHW and a convolution runs conv2d_forward /
 * conv2d_backward.
 */
#pragma once

#include <cstddef>

#include "trainer/backend/backend_types.h"

namespace sweep::trainer {

class Backend;

class ChannelsLastOps {
 public:
  virtual ~ChannelsLastOps() = default;

  // The channels-last storage this backend keeps; fp32_nchw: none.
  virtual Storage nhwc_storage() const = 0;
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

  // Bytes a convolution layer holds for conv2d_forward_stored's `kept` at batch g.n, its input
  // stored as xs: operands in the form the backend computes with, kept from the training forward
  // to the backward (CUDA on channels-last activations: the weights' K,R,S,C copy in the plan's
  // type, and x's when x is fp32 NCHW, so that backward converts neither again). 0: nothing to
  // keep.
  virtual std::size_t conv_kept_bytes(const ConvGeom& g, Storage xs) = 0;
  // A convolution whose input and output are each in any storage (xs, ys; dx is in xs and dy in
  // ys). kept: conv_kept_bytes(g, xs) bytes the layer holds from its training forward to its
  // backward (null in inference: then nothing is kept). fp32 NCHW both ways: the same numbers as
  // conv2d_forward / conv2d_backward.
  virtual void conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x, const float* w,
                                     const float* b, Storage ys, void* y, void* kept) = 0;
  virtual void conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x,
                                      const void* kept, const float* w, Storage ys, const void* dy,
                                      void* dx, float* dw, float* db) = 0;
  // Batch norm on channels-last tensors of storage s, with the ReLU after it when `relu` (the
  // fused *_relu ops' semantics, fused_ops.h); relu_y: the training forward's output when relu,
  // else null.
  virtual void batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                            const float* gamma, const float* beta,
                                            float* running_mean, float* running_var,
                                            float* save_mean, float* save_invstd, void* y,
                                            bool relu) = 0;
  virtual void batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                            const float* gamma, const float* beta,
                                            const float* running_mean, const float* running_var,
                                            void* y, bool relu) = 0;
  virtual void batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                       const void* relu_y, const void* dy, const float* gamma,
                                       const float* save_mean, const float* save_invstd, void* dx,
                                       float* dgamma, float* dbeta) = 0;
  virtual void relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n) = 0;
  virtual void relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                                  std::size_t n) = 0;
  virtual void add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n,
                        bool relu) = 0;
  // Max pooling 2x2 stride 2 (is_2x2_stride2) only.
  virtual void maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y) = 0;
  virtual void maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x, const void* y,
                                        const void* dy, void* dx) = 0;
  // Global average pooling (g's window is its whole plane): (n, h, w, c) of storage s in, fp32
  // (n, c) out; backward the other way.
  virtual void global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x,
                                           float* y) = 0;
  virtual void global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                            void* dx) = 0;
};

// The channels-last storage b keeps: its group's nhwc_storage(), fp32_nchw without the group.
Storage kept_storage(const Backend& b);
// ChannelsLastOps::conv_reads_nhwc / conv_writes_nhwc on any backend: false without the group.
bool conv_reads_nhwc(const Backend& b, const ConvGeom& g);
bool conv_writes_nhwc(const Backend& b, const ConvGeom& g);
// b's group, for an op on a tensor the plan stored channels-last (which only a backend with the
// group can have made); throws sweep::Error naming the backend otherwise.
ChannelsLastOps& channels_last(Backend& b);

}  // namespace sweep::trainer
