/*
 * dense.h — fully connected layer. Parameters: weight (out, in) as PyTorch's Linear, then bias.
 *
 * A 4-D input is read as (N, C*H*W) without a copy (NCHW is already that matrix), so a dense
 * layer after a convolution flattens implicitly, exactly like torch.flatten(x, 1).
 */
#pragma once

#include "trainer/layers/layer.h"

namespace sweep::trainer {

class Dense final : public Layer {
 public:
  Dense(int units, bool bias) : units_(units), bias_(bias) {}
  LayerKind kind() const override { return LayerKind::dense; }
  std::string describe() const override;
  Shape setup(Shape in) override;
  void init(std::mt19937_64& rng, float* host_params, float* host_state) const override;
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  int units() const { return units_; }
  // Set by Network when a ReLU layer follows (forward writes the ReLU's output, and the ReLU
  // runs as a view of it) or precedes this layer (backward's dx goes on through that ReLU, whose
  // own backward is skipped): Backend::dense_forward_relu / dense_backward_relu_input.
  void fuse_relu_after(bool on) { relu_after_ = on; }
  void fuse_relu_input(bool on) { relu_input_ = on; }

 private:
  int units_, in_features_ = 0;
  bool bias_;
  bool relu_after_ = false, relu_input_ = false;
};

}  // namespace sweep::trainer
