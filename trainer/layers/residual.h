/*
 * residual.h — a residual block: out = act(F(x) + shortcut(x)), He et al. 2016 ("added before
 * the activation").
 *
 * F is the block's own list of layers (any layer kind, a residual block included). The shortcut
 * is the identity when F keeps the input's shape, otherwise a 1x1 convolution without bias, with
 * the stride that maps the input's height and width onto F's, followed by batch normalisation
 * (the paper's option B), made here from the shapes. act is ReLU or none.
 *
 * Parameters, carved from the block's slice of the Network's flat buffers in this order: each of
 * F's layers in list order (each in its own layout, e.g. conv weight then bias), then the
 * projection's conv weight (K, C, 1, 1), then its batch norm's gamma (K) and beta (K). State
 * likewise: F's layers in order (batch norm running mean, running variance), then the
 * projection's. So a network whose blocks all have identity shortcuts has exactly the layout of the
 * same layers written without blocks.
 *
 * Buffers, allocated at bind for max_batch samples: F's outputs (views alias), the projection's
 * two outputs, the gradient of the sum when act is ReLU, and two ping-pong gradient buffers that
 * F's backward chain alternates between (a layer's dy is dead once its dx is written), so a block
 * holds two gradient buffers however long F is. forward and backward allocate nothing.
 *
 * Channels-last activations (storage_plan.h): a block whose layers and projection all take them
 * passes its input's storage on (identity shortcut, or a projection with no convolution in F), or
 * reads either and writes either (a projection and a convolution in F); F's own tensors are planned
 * inside the block with the block's input and output storage at its ends.
 */
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "trainer/layers/batchnorm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/layer.h"

namespace sweep::trainer {

class Residual final : public Layer {
 public:
  Residual(std::vector<std::unique_ptr<Layer>> body, Activation activation);
  ~Residual() override;

  LayerKind kind() const override { return LayerKind::residual; }
  std::string describe() const override;
  std::vector<LayerPart> parts() const override;
  bool contains(LayerKind kind) const override;

  Shape setup(Shape in) override;
  NhwcRole nhwc_role(const Backend& backend) const override;
  void bind(Backend& backend, float* params, float* grads, float* state, int max_batch) override;
  void init(std::mt19937_64& rng, float* host_params, float* host_state) const override;
  void set_random(std::uint64_t seed, std::uint64_t counter) override;
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

  // Test access.
  const std::vector<std::unique_ptr<Layer>>& body() const { return body_; }
  bool has_projection() const { return proj_conv_ != nullptr; }
  int projection_stride() const { return proj_stride_; }

 private:
  // y = a + b (relu: max(0, a + b)) over n values in storage s.
  void sum(const float* a, const float* b, float* y, std::size_t n, Storage s, bool relu);
  std::size_t numel(Shape s) const { return std::size_t(max_batch_) * std::size_t(s.numel()); }

  std::vector<std::unique_ptr<Layer>> body_;
  Activation activation_;
  std::unique_ptr<Conv2d> proj_conv_;  // null: identity shortcut
  std::unique_ptr<BatchNorm> proj_bn_;
  int proj_stride_ = 1;
  std::vector<Shape> shapes_;      // shapes_[j]: input of body layer j; shapes_.back(): F's output
  std::size_t first_compute_ = 0;  // the first body layer that is not a view

  int max_batch_ = 0;
  std::vector<DeviceBuffer> acts_;        // output of body layer j (empty for a view)
  std::vector<const float*> outs_;        // output of body layer j in the last forward
  std::vector<char> folded_;              // body layer j is a ReLU the batch norm before it runs
  DeviceBuffer proj_out_, shortcut_out_;  // the projection's conv and batch norm outputs
  DeviceBuffer dsum_;                     // d(F + shortcut), when act is ReLU
  DeviceBuffer ping_, pong_;              // F's gradient chain (and the projection's)
};

// "block layer 2 of 5 (conv): " — the prefix of an error inside a residual block.
std::string block_layer_error_prefix(std::size_t index, std::size_t count, std::string_view type);

}  // namespace sweep::trainer
