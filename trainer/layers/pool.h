/*
 * pool.h — max pooling, average pooling and global average pooling (no parameters).
 *
 * Output size is floor((H + 2*pad - size) / stride) + 1, PyTorch's default (ceil_mode False);
 * padding may be at most half the window, PyTorch's rule, so no window lies wholly in padding.
 * Global average pooling is average pooling whose window is the whole input plane.
 */
#pragma once

#include "trainer/layers/layer.h"

namespace sweep::trainer {

class Pool2d final : public Layer {
 public:
  Pool2d(PoolMode mode, int size, int stride, int padding)
      : mode_(mode), size_(size), stride_(stride), pad_(padding) {}
  LayerKind kind() const override {
    return mode_ == PoolMode::max ? LayerKind::maxpool : LayerKind::avgpool;
  }
  std::string describe() const override;
  Shape setup(Shape in) override;
  NhwcRole nhwc_role(const Backend& backend) const override;
  void bind(Backend& backend, float* params, float* grads, float* state, int max_batch) override;
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  // A 2x2 max pooling of stride 2 on fp32 NCHW: the convolution before it may pool its output
  // (Conv2d::fuse_maxpool_after).
  bool pools_2x2_max_fp32() const;
  // The convolution before it computes this pooling (its forward is not run): the buffer of a byte
  // a window for the convolution to write each window's argmax to, which the backward then reads.
  std::uint8_t* keep_argmax_for_conv();

 private:
  PoolGeom geometry(int batch) const;
  PoolMode mode_;
  int size_, stride_, pad_;
  int max_batch_ = 0;
  DeviceBuffer argmax_;  // keep_argmax_for_conv's
};

class GlobalAvgPool final : public Layer {
 public:
  LayerKind kind() const override { return LayerKind::gap; }
  Shape setup(Shape in) override;
  NhwcRole nhwc_role(const Backend&) const override { return NhwcRole::reads; }
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;

 private:
  PoolGeom geometry(int batch) const;
};

// Flatten (N, C, H, W) to (N, C*H*W): NCHW already is that matrix, so this is a view.
class Flatten final : public Layer {
 public:
  LayerKind kind() const override { return LayerKind::flatten; }
  Shape setup(Shape in) override {
    in_ = in;
    return out_ = Shape{static_cast<int>(in.numel()), 1, 1};
  }
  bool is_view() const override { return true; }
  void forward(const float*, float*, int, bool) override {}
  void backward(const float*, const float*, const float*, float*, int) override {}
};

}  // namespace sweep::trainer
