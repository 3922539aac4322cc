/*
 * conv2d.h — 2-D convolution layer. Parameters: weight (K, C, R, S), then bias (K) when enabled.
 *
 * "same" padding is only offered where it is exact: stride 1 and an odd kernel, pad = (k - 1) / 2.
 * (An even kernel would need asymmetric padding, which neither backend supports.)
 */
#pragma once

#include <cstdint>

#include "trainer/layers/layer.h"
#include "trainer/layers/pool.h"

namespace sweep::trainer {

struct Conv2dOptions {
  int filters = 1;
  int kernel = 3;
  int stride = 1;
  int padding = 0;
  bool same = false;  // padding "same" (overrides `padding`)
  bool bias = true;
};

class Conv2d final : public Layer {
 public:
  explicit Conv2d(const Conv2dOptions& o) : opt_(o) {}
  LayerKind kind() const override { return LayerKind::conv; }
  std::string describe() const override;
  Shape setup(Shape in) override;
  NhwcRole nhwc_role(const Backend& backend) const override;
  void bind(Backend& backend, float* params, float* grads, float* state, int max_batch) override;
  void init(std::mt19937_64& rng, float* host_params, float* host_state) const override;
  void forward(const float* x, float* y, int batch, bool training) override;
  void backward(const float* x, const float* y, const float* dy, float* dx, int batch) override;
  ConvGeom geometry(int batch) const;
  // The 2x2 max pooling after it, computed by this forward (Backend::conv2d_forward_maxpool2x2)
  // into the pooling's output `pooled`, where both keep fp32 NCHW and nothing channels-last is
  // kept; the pooling's backward then reads the argmax. Returns whether it did (Network then skips
  // the pooling's forward). After bind().
  bool fuse_maxpool_after(Pool2d& pool, float* pooled);

 private:
  Conv2dOptions opt_;
  int pad_ = 0;
  float* pooled_ = nullptr;  // fuse_maxpool_after's
  std::uint8_t* argmax_ = nullptr;
  // Operands as the backend keeps them from forward to backward (Backend::conv_kept_bytes).
  DeviceBuffer kept_;
};

}  // namespace sweep::trainer
