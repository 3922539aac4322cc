/*
 * nhwc_reference.cpp — NhwcReference's ops (nhwc_reference.h): each converts its channels-last
 * operands to fp32 NCHW, runs the backend's fp32 op and converts the results back.
 */
#include "trainer/backend/nhwc_reference.h"

#include <limits>

#include "common/check.h"
#include "trainer/backend/backend.h"
#include "trainer/backend/fused_ops.h"

namespace sweep::trainer {

namespace {

// One tensor of n images, c channels, hw pixels, in the reference's fp32 form.
class Fp32Copy {
 public:
  Fp32Copy(Backend& b, ChannelsLastOps& ops, int n, int c, int hw)
      : backend_(b), ops_(ops), n_(n), c_(c), hw_(hw) {}
  // x as fp32 NCHW: itself when fp32 NCHW, else converted into this copy.
  const float* read(Storage s, const void* x) {
    if (!x || !is_nhwc(s)) return static_cast<const float*>(x);
    ops_.from_storage(s, x, target(), n_, c_, hw_);
    return buffer_.f();
  }
  // Where the fp32 op writes a result meant for y: y itself when fp32 NCHW, else this copy.
  float* write(Storage s, void* y) {
    if (!y || !is_nhwc(s)) return static_cast<float*>(y);
    return target();
  }
  // After the fp32 op: converts this copy into y when y is channels-last.
  void store(Storage s, void* y) {
    if (y && is_nhwc(s)) ops_.to_storage(s, buffer_.f(), y, n_, c_, hw_);
  }

 private:
  float* target() {
    if (!buffer_) buffer_ = DeviceBuffer(backend_, std::size_t(n_) * c_ * hw_ * sizeof(float));
    return buffer_.f();
  }
  Backend& backend_;
  ChannelsLastOps& ops_;
  int n_, c_, hw_;
  DeviceBuffer buffer_;
};

// Elementwise ops see n values as one image of n pixels and one channel (no transpose).
int elements(std::size_t n) {
  if (n > std::size_t(std::numeric_limits<int>::max()))
    throw Error("channels-last reference op on 2^31 values or more");
  return static_cast<int>(n);
}

}  // namespace

std::size_t NhwcReference::conv_kept_bytes(const ConvGeom& g, Storage xs) {
  (void)g;
  (void)xs;
  return 0;
}

void NhwcReference::conv2d_forward_stored(const ConvGeom& g, Storage xs, const void* x,
                                          const float* w, const float* b, Storage ys, void* y,
                                          void* kept) {
  (void)kept;
  Fp32Copy xf(backend_, *this, g.n, g.c, g.h * g.w),
      yf(backend_, *this, g.n, g.k, g.out_h * g.out_w);
  backend_.conv2d_forward(g, xf.read(xs, x), w, b, yf.write(ys, y));
  yf.store(ys, y);
}

void NhwcReference::conv2d_backward_stored(const ConvGeom& g, Storage xs, const void* x,
                                           const void* kept, const float* w, Storage ys,
                                           const void* dy, void* dx, float* dw, float* db) {
  (void)kept;
  Fp32Copy xf(backend_, *this, g.n, g.c, g.h * g.w),
      dyf(backend_, *this, g.n, g.k, g.out_h * g.out_w), dxf(backend_, *this, g.n, g.c, g.h * g.w);
  backend_.conv2d_backward(g, xf.read(xs, x), w, dyf.read(ys, dy), dxf.write(xs, dx), dw, db);
  dxf.store(xs, dx);
}

void NhwcReference::batchnorm_forward_train_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                                 const float* gamma, const float* beta,
                                                 float* running_mean, float* running_var,
                                                 float* save_mean, float* save_invstd, void* y,
                                                 bool relu) {
  Fp32Copy xf(backend_, *this, g.n, g.c, g.hw), yf(backend_, *this, g.n, g.c, g.hw);
  const float* xin = xf.read(s, x);
  float* yout = yf.write(s, y);
  if (relu)
    batchnorm_forward_train_relu(backend_, g, xin, gamma, beta, running_mean, running_var,
                                 save_mean, save_invstd, yout);
  else
    backend_.batchnorm_forward_train(g, xin, gamma, beta, running_mean, running_var, save_mean,
                                     save_invstd, yout);
  yf.store(s, y);
}

void NhwcReference::batchnorm_forward_infer_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                                 const float* gamma, const float* beta,
                                                 const float* running_mean,
                                                 const float* running_var, void* y, bool relu) {
  Fp32Copy xf(backend_, *this, g.n, g.c, g.hw), yf(backend_, *this, g.n, g.c, g.hw);
  const float* xin = xf.read(s, x);
  float* yout = yf.write(s, y);
  if (relu)
    batchnorm_forward_infer_relu(backend_, g, xin, gamma, beta, running_mean, running_var, yout);
  else
    backend_.batchnorm_forward_infer(g, xin, gamma, beta, running_mean, running_var, yout);
  yf.store(s, y);
}

void NhwcReference::batchnorm_backward_nhwc(const BatchNormGeom& g, Storage s, const void* x,
                                            const void* relu_y, const void* dy, const float* gamma,
                                            const float* save_mean, const float* save_invstd,
                                            void* dx, float* dgamma, float* dbeta) {
  Fp32Copy xf(backend_, *this, g.n, g.c, g.hw), yf(backend_, *this, g.n, g.c, g.hw),
      dyf(backend_, *this, g.n, g.c, g.hw), dxf(backend_, *this, g.n, g.c, g.hw);
  const float* xin = xf.read(s, x);
  const float* dyin = dyf.read(s, dy);  // before dx is written: they may be one buffer
  float* dxout = dxf.write(s, dx);
  if (relu_y)
    batchnorm_backward_relu(backend_, g, xin, yf.read(s, relu_y), dyin, gamma, save_mean,
                            save_invstd, dxout, dgamma, dbeta);
  else
    backend_.batchnorm_backward(g, xin, dyin, gamma, save_mean, save_invstd, dxout, dgamma, dbeta);
  dxf.store(s, dx);
}

void NhwcReference::relu_forward_nhwc(Storage s, const void* x, void* y, std::size_t n) {
  Fp32Copy xf(backend_, *this, 1, 1, elements(n)), yf(backend_, *this, 1, 1, elements(n));
  backend_.relu_forward(xf.read(s, x), yf.write(s, y), n);
  yf.store(s, y);
}

void NhwcReference::relu_backward_nhwc(Storage s, const void* y, const void* dy, void* dx,
                                       std::size_t n) {
  Fp32Copy yf(backend_, *this, 1, 1, elements(n)), dyf(backend_, *this, 1, 1, elements(n)),
      dxf(backend_, *this, 1, 1, elements(n));
  const float* yin = yf.read(s, y);
  const float* dyin = dyf.read(s, dy);
  backend_.relu_backward(yin, dyin, dxf.write(s, dx), n);
  dxf.store(s, dx);
}

void NhwcReference::add_nhwc(Storage s, const void* a, const void* b, void* y, std::size_t n,
                             bool relu) {
  Fp32Copy af(backend_, *this, 1, 1, elements(n)), bf(backend_, *this, 1, 1, elements(n)),
      yf(backend_, *this, 1, 1, elements(n));
  const float* ain = af.read(s, a);
  const float* bin = bf.read(s, b);
  float* yout = yf.write(s, y);
  if (relu)
    add_relu(backend_, ain, bin, yout, n);
  else
    backend_.add(ain, bin, yout, n);
  yf.store(s, y);
}

void NhwcReference::maxpool2x2_forward_nhwc(const PoolGeom& g, Storage s, const void* x, void* y) {
  if (!is_2x2_stride2(g))
    throw Error("channels-last max pooling takes 2x2 windows of stride 2 only");
  Fp32Copy xf(backend_, *this, g.n, g.c, g.h * g.w),
      yf(backend_, *this, g.n, g.c, g.out_h * g.out_w);
  backend_.pool_forward(g, PoolMode::max, xf.read(s, x), yf.write(s, y));
  yf.store(s, y);
}

void NhwcReference::maxpool2x2_backward_nhwc(const PoolGeom& g, Storage s, const void* x,
                                             const void* y, const void* dy, void* dx) {
  if (!is_2x2_stride2(g))
    throw Error("channels-last max pooling takes 2x2 windows of stride 2 only");
  Fp32Copy xf(backend_, *this, g.n, g.c, g.h * g.w),
      yf(backend_, *this, g.n, g.c, g.out_h * g.out_w),
      dyf(backend_, *this, g.n, g.c, g.out_h * g.out_w), dxf(backend_, *this, g.n, g.c, g.h * g.w);
  const float* xin = xf.read(s, x);
  const float* yin = yf.read(s, y);
  const float* dyin = dyf.read(s, dy);
  backend_.pool_backward(g, PoolMode::max, xin, yin, dyin, dxf.write(s, dx));
  dxf.store(s, dx);
}

void NhwcReference::global_avgpool_forward_nhwc(const PoolGeom& g, Storage s, const void* x,
                                                float* y) {
  Fp32Copy xf(backend_, *this, g.n, g.c, g.h * g.w);
  backend_.pool_forward(g, PoolMode::average, xf.read(s, x), y);
}

void NhwcReference::global_avgpool_backward_nhwc(const PoolGeom& g, Storage s, const float* dy,
                                                 void* dx) {
  Fp32Copy dxf(backend_, *this, g.n, g.c, g.h * g.w);
  // Average pooling's backward reads neither x nor y: arrays of their shapes stand in.
  float* dxout = dxf.write(s, dx);
  backend_.pool_backward(g, PoolMode::average, dxout, dy, dy, dxout);
  dxf.store(s, dx);
}

}  // namespace sweep::trainer
