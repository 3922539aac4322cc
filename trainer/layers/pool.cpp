/*
 * pool.cpp — pooling layers: shape rules, then straight calls into the backend.
 */
#include "trainer/layers/pool.h"

#include "common/check.h"

namespace sweep::trainer {

std::string Pool2d::describe() const {
  std::string d = type() + " " + std::to_string(size_) + "x" + std::to_string(size_);
  if (stride_ != size_) d += " stride " + std::to_string(stride_);
  if (pad_) d += " pad " + std::to_string(pad_);
  return d;
}

Shape Pool2d::setup(Shape in) {
  if (size_ < 1) throw Error("size must be at least 1");
  if (stride_ < 1) throw Error("stride must be at least 1");
  if (pad_ < 0 || 2 * pad_ > size_)
    throw Error("padding must be between 0 and half the window (" + std::to_string(size_ / 2) +
                "), got " + std::to_string(pad_));
  const int ph = in.h + 2 * pad_, pw = in.w + 2 * pad_;
  if (size_ > ph || size_ > pw)
    throw Error("window " + std::to_string(size_) + "x" + std::to_string(size_) +
                " is larger than its input " + std::to_string(in.h) + "x" + std::to_string(in.w));
  in_ = in;
  out_ = Shape{in.c, (ph - size_) / stride_ + 1, (pw - size_) / stride_ + 1};
  return out_;
}

PoolGeom Pool2d::geometry(int batch) const {
  return PoolGeom{batch,   in_.c,   in_.h, in_.w, size_,  size_,
                  stride_, stride_, pad_,  pad_,  out_.h, out_.w};
}

// Channels-last activations pass through the common case only: 2x2 max pooling of stride 2.
NhwcRole Pool2d::nhwc_role(const Backend&) const {
  return mode_ == PoolMode::max && is_2x2_stride2(geometry(1)) ? NhwcRole::passthrough
                                                               : NhwcRole::none;
}

void Pool2d::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  Layer::bind(backend, params, grads, state, max_batch);
  max_batch_ = max_batch;
}

bool Pool2d::pools_2x2_max_fp32() const {
  return mode_ == PoolMode::max && is_2x2_stride2(geometry(1)) &&
         in_storage_ == Storage::fp32_nchw && out_storage_ == Storage::fp32_nchw;
}

std::uint8_t* Pool2d::keep_argmax_for_conv() {
  argmax_ = DeviceBuffer(*backend_, std::size_t(max_batch_) * out_.numel());
  return argmax_.as<std::uint8_t>();
}

void Pool2d::forward(const float* x, float* y, int batch, bool training) {
  if (argmax_) throw Error("internal: a pooling its convolution computes ran its own forward");
  if (is_nhwc(in_storage_))
    channels_last(*backend_).maxpool2x2_forward_nhwc(geometry(batch), in_storage_, x, y);
  else
    backend_->pool_forward(geometry(batch), mode_, x, y);
}

void Pool2d::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  if (!dx) return;
  if (is_nhwc(in_storage_))
    channels_last(*backend_).maxpool2x2_backward_nhwc(geometry(batch), in_storage_, x, y, dy, dx);
  else if (argmax_)  // x, the convolution's output, was never written
    backend_->fused_ops()->maxpool2x2_backward_argmax(geometry(batch), argmax_.as<std::uint8_t>(),
                                                      dy, dx);
  else
    backend_->pool_backward(geometry(batch), mode_, x, y, dy, dx);
}

Shape GlobalAvgPool::setup(Shape in) {
  in_ = in;
  return out_ = Shape{in.c, 1, 1};
}

PoolGeom GlobalAvgPool::geometry(int batch) const {
  return PoolGeom{batch, in_.c, in_.h, in_.w, in_.h, in_.w, in_.h, in_.w, 0, 0, 1, 1};
}

void GlobalAvgPool::forward(const float* x, float* y, int batch, bool training) {
  if (is_nhwc(in_storage_))
    channels_last(*backend_).global_avgpool_forward_nhwc(geometry(batch), in_storage_, x, y);
  else
    backend_->pool_forward(geometry(batch), PoolMode::average, x, y);
}

void GlobalAvgPool::backward(const float* x, const float* y, const float* dy, float* dx,
                             int batch) {
  if (!dx) return;
  if (is_nhwc(in_storage_))
    channels_last(*backend_).global_avgpool_backward_nhwc(geometry(batch), in_storage_, dy, dx);
  else
    backend_->pool_backward(geometry(batch), PoolMode::average, x, y, dy, dx);
}

}  // namespace sweep::trainer
