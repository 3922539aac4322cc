/*
 * reference_residual.h — a residual block written out with the reference ops (reference_ops.h), in
 * any precision: out = act(F(x) + shortcut(x)), F a chain of conv / batchnorm / relu, the
 * shortcut the identity or a 1x1 conv (no bias) + batchnorm, act relu or none.
 *
 * Parameters and state are laid out as trainer/layers/residual.h documents (F's layers in order,
 * each weight then bias, batch norm gamma then beta; then the projection's conv weight, gamma,
 * beta), so one flat array feeds both this reference and the Residual layer. Batch norm uses the
 * batch's statistics (training mode) throughout.
 */
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "reference_ops.h"
#include "trainer/network.h"

namespace sweep::trainer::ref {

struct RefLayer {
  LayerKind kind = LayerKind::relu;  // conv, batchnorm or relu
  Shape in, out;
  int k = 0, r = 0, stride = 1, pad = 0;  // conv
  bool bias = false;

  std::size_t params() const {
    if (kind == LayerKind::conv) return std::size_t(k) * in.c * r * r + (bias ? std::size_t(k) : 0);
    return kind == LayerKind::batchnorm ? 2 * std::size_t(in.c) : 0;
  }
  std::size_t states() const { return kind == LayerKind::batchnorm ? 2 * std::size_t(in.c) : 0; }
  ConvGeom conv(int n) const {
    return ConvGeom{n, in.c, in.h, in.w, k, r, r, stride, stride, pad, pad, out.h, out.w};
  }
  BatchNormGeom bn(int n) const { return BatchNormGeom{n, in.c, in.h * in.w, 1e-5f, 0.1f}; }
};

inline RefLayer conv_layer(Shape in, int k, int r, int stride, int pad, bool bias) {
  RefLayer l{LayerKind::conv, in, {}, k, r, stride, pad, bias};
  l.out = Shape{k, (in.h + 2 * pad - r) / stride + 1, (in.w + 2 * pad - r) / stride + 1};
  return l;
}
inline RefLayer bn_layer(Shape in) { return RefLayer{LayerKind::batchnorm, in, in}; }
inline RefLayer relu_layer(Shape in) { return RefLayer{LayerKind::relu, in, in}; }

template <class T>
class RefBlock {
 public:
  // F's layers; `projection_stride` 0: identity shortcut, else 1x1 conv of that stride + bn.
  RefBlock(std::vector<RefLayer> body, int projection_stride, bool relu_after)
      : body_(std::move(body)), relu_after_(relu_after) {
    if (projection_stride > 0) {
      const Shape out = body_.back().out;
      proj_conv_ = conv_layer(body_.front().in, out.c, 1, projection_stride, 0, false);
      proj_bn_ = bn_layer(proj_conv_->out);
    }
  }

  Shape in() const { return body_.front().in; }
  Shape out() const { return body_.back().out; }
  std::size_t params() const {
    std::size_t p = 0;
    for (const RefLayer& l : all()) p += l.params();
    return p;
  }
  std::size_t states() const {
    std::size_t s = 0;
    for (const RefLayer& l : all()) s += l.states();
    return s;
  }

  // y = block(x) for n samples; `state` (running statistics) is updated when not null.
  void forward(int n, const T* x, const T* p, T* state, T* y) {
    const std::vector<RefLayer> layers = all();
    acts_.assign(layers.size() + 1, {});
    saved_.assign(layers.size(), {});
    acts_[0].assign(x, x + std::size_t(n) * in().numel());
    std::size_t po = 0, so = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const RefLayer& l = layers[i];
      // The projection reads the block's input, not the previous layer's output.
      const std::vector<T>& input = is_projection_conv(i) ? acts_[0] : acts_[i];
      acts_[i + 1].assign(std::size_t(n) * l.out.numel(), T(0));
      T* out = acts_[i + 1].data();
      switch (l.kind) {
        case LayerKind::conv:
          conv2d_forward(l.conv(n), input.data(), p + po,
                         l.bias ? p + po + l.params() - l.k : nullptr, out);
          break;
        case LayerKind::batchnorm:
          saved_[i].assign(2 * std::size_t(l.in.c), T(0));
          batchnorm_forward_train(l.bn(n), input.data(), p + po, p + po + l.in.c,
                                  state ? state + so : nullptr,
                                  state ? state + so + l.in.c : nullptr, saved_[i].data(),
                                  saved_[i].data() + l.in.c, out);
          break;
        default:
          relu_forward(input.data(), out, input.size());
      }
      po += l.params();
      so += l.states();
    }
    const std::size_t m = std::size_t(n) * out().numel();
    const T* f = acts_[body_.size()].data();
    const T* s = proj_conv_ ? acts_.back().data() : acts_[0].data();
    y_.assign(m, T(0));
    for (std::size_t i = 0; i < m; ++i) y_[i] = f[i] + s[i];
    if (relu_after_) relu_forward(y_.data(), y_.data(), m);
    std::copy(y_.begin(), y_.end(), y);
  }

  // Given dy for the last forward: dx, and dp (every parameter's gradient, in the layout).
  void backward(int n, const T* p, const T* dy, T* dx, T* dp) {
    const std::vector<RefLayer> layers = all();
    const std::size_t m = std::size_t(n) * out().numel();
    std::vector<T> dsum(dy, dy + m);
    if (relu_after_) relu_backward(y_.data(), dy, dsum.data(), m);
    std::vector<std::size_t> po(layers.size() + 1, 0);
    for (std::size_t i = 0; i < layers.size(); ++i) po[i + 1] = po[i] + layers[i].params();

    // One layer's backward: gradient of its input from `g`, parameters into dp.
    auto back = [&](std::size_t i, const std::vector<T>& input, const std::vector<T>& g) {
      const RefLayer& l = layers[i];
      std::vector<T> gin(std::size_t(n) * l.in.numel(), T(0));
      switch (l.kind) {
        case LayerKind::conv:
          conv2d_backward(l.conv(n), input.data(), p + po[i], g.data(), gin.data(), dp + po[i],
                          l.bias ? dp + po[i] + l.params() - l.k : nullptr);
          break;
        case LayerKind::batchnorm:
          batchnorm_backward(l.bn(n), input.data(), g.data(), p + po[i], saved_[i].data(),
                             saved_[i].data() + l.in.c, gin.data(), dp + po[i],
                             dp + po[i] + l.in.c);
          break;
        default:
          relu_backward(acts_[i + 1].data(), g.data(), gin.data(), gin.size());
      }
      return gin;
    };
    std::vector<T> g = dsum;
    for (std::size_t i = body_.size(); i-- > 0;) g = back(i, acts_[i], g);
    std::vector<T> gs = dsum;
    if (proj_conv_) {
      const std::size_t c = body_.size();  // the projection's conv, then its bn
      gs = back(c, acts_[0], back(c + 1, acts_[c + 1], dsum));
    }
    for (std::size_t i = 0; i < g.size(); ++i) dx[i] = g[i] + gs[i];
  }

 private:
  std::vector<RefLayer> all() const {
    std::vector<RefLayer> layers = body_;
    if (proj_conv_) {
      layers.push_back(*proj_conv_);
      layers.push_back(*proj_bn_);
    }
    return layers;
  }
  bool is_projection_conv(std::size_t i) const { return proj_conv_ && i == body_.size(); }

  std::vector<RefLayer> body_;
  std::optional<RefLayer> proj_conv_, proj_bn_;
  bool relu_after_;
  std::vector<std::vector<T>> acts_;   // acts_[0] = x; acts_[i + 1] = output of layer i
  std::vector<std::vector<T>> saved_;  // batch norm: mean, invstd
  std::vector<T> y_;
};

}  // namespace sweep::trainer::ref
