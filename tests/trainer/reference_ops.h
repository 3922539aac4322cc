/*
 * reference_ops.h — plain, obviously-correct versions of every Backend op, templated on the
 * value type, for tests only.
 *
 * Naive loops straight from the definitions (no im2col, no blocking, no parallelism), so a bug in
 * the fast CPU backend or the CUDA backend cannot hide behind the same trick here. Instantiated
 * with double they are the yardstick for the float backends and the functions the finite-difference
 * gradient checks differentiate. Layouts and semantics are backend.h's.
 */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/rng.h"

namespace sweep::trainer::ref {

// ---- dense: y (n, out) = x (n, in) w^T (out, in) + b
template <class T>
void dense_forward(const T* x, const T* w, const T* b, T* y, int n, int in, int out) {
  for (int i = 0; i < n; ++i)
    for (int o = 0; o < out; ++o) {
      T acc = b ? b[o] : T(0);
      for (int k = 0; k < in; ++k) acc += x[i * in + k] * w[o * in + k];
      y[i * out + o] = acc;
    }
}

template <class T>
void dense_backward(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int n, int in,
                    int out) {
  if (dx)
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < in; ++k) {
        T acc = 0;
        for (int o = 0; o < out; ++o) acc += dy[i * out + o] * w[o * in + k];
        dx[i * in + k] = acc;
      }
  for (int o = 0; o < out; ++o)
    for (int k = 0; k < in; ++k) {
      T acc = 0;
      for (int i = 0; i < n; ++i) acc += dy[i * out + o] * x[i * in + k];
      dw[o * in + k] = acc;
    }
  if (db)
    for (int o = 0; o < out; ++o) {
      T acc = 0;
      for (int i = 0; i < n; ++i) acc += dy[i * out + o];
      db[o] = acc;
    }
}

// ---- convolution (cross-correlation), NCHW, weights (K, C, R, S)
template <class T>
void conv2d_forward(const ConvGeom& g, const T* x, const T* w, const T* b, T* y) {
  for (int n = 0; n < g.n; ++n)
    for (int k = 0; k < g.k; ++k)
      for (int oh = 0; oh < g.out_h; ++oh)
        for (int ow = 0; ow < g.out_w; ++ow) {
          T acc = b ? b[k] : T(0);
          for (int c = 0; c < g.c; ++c)
            for (int r = 0; r < g.r; ++r)
              for (int s = 0; s < g.s; ++s) {
                const int ih = oh * g.stride_h - g.pad_h + r, iw = ow * g.stride_w - g.pad_w + s;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                acc += x[((n * g.c + c) * g.h + ih) * g.w + iw] *
                       w[((k * g.c + c) * g.r + r) * g.s + s];
              }
          y[((n * g.k + k) * g.out_h + oh) * g.out_w + ow] = acc;
        }
}

template <class T>
void conv2d_backward(const ConvGeom& g, const T* x, const T* w, const T* dy, T* dx, T* dw, T* db) {
  if (dx) std::fill(dx, dx + std::size_t(g.n) * g.c * g.h * g.w, T(0));
  std::fill(dw, dw + std::size_t(g.k) * g.c * g.r * g.s, T(0));
  if (db) std::fill(db, db + g.k, T(0));
  for (int n = 0; n < g.n; ++n)
    for (int k = 0; k < g.k; ++k)
      for (int oh = 0; oh < g.out_h; ++oh)
        for (int ow = 0; ow < g.out_w; ++ow) {
          const T d = dy[((n * g.k + k) * g.out_h + oh) * g.out_w + ow];
          if (db) db[k] += d;
          for (int c = 0; c < g.c; ++c)
            for (int r = 0; r < g.r; ++r)
              for (int s = 0; s < g.s; ++s) {
                const int ih = oh * g.stride_h - g.pad_h + r, iw = ow * g.stride_w - g.pad_w + s;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                const std::size_t xi = ((std::size_t(n) * g.c + c) * g.h + ih) * g.w + iw;
                const std::size_t wi = ((std::size_t(k) * g.c + c) * g.r + r) * g.s + s;
                dw[wi] += d * x[xi];
                if (dx) dx[xi] += d * w[wi];
              }
        }
}

// ---- pooling. Max ignores padding; average divides by kh * kw (padding counts as zeros).
template <class T>
void pool_forward(const PoolGeom& g, PoolMode mode, const T* x, T* y) {
  for (int p = 0; p < g.n * g.c; ++p)
    for (int oh = 0; oh < g.out_h; ++oh)
      for (int ow = 0; ow < g.out_w; ++ow) {
        T best = -std::numeric_limits<T>::infinity(), sum = 0;
        for (int i = 0; i < g.kh; ++i)
          for (int j = 0; j < g.kw; ++j) {
            const int ih = oh * g.stride_h - g.pad_h + i, iw = ow * g.stride_w - g.pad_w + j;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            const T v = x[(std::size_t(p) * g.h + ih) * g.w + iw];
            best = std::max(best, v);
            sum += v;
          }
        y[(std::size_t(p) * g.out_h + oh) * g.out_w + ow] =
            mode == PoolMode::max ? best : sum / T(g.kh * g.kw);
      }
}

template <class T>
void pool_backward(const PoolGeom& g, PoolMode mode, const T* x, const T* y, const T* dy, T* dx) {
  std::fill(dx, dx + std::size_t(g.n) * g.c * g.h * g.w, T(0));
  for (int p = 0; p < g.n * g.c; ++p)
    for (int oh = 0; oh < g.out_h; ++oh)
      for (int ow = 0; ow < g.out_w; ++ow) {
        const std::size_t oi = (std::size_t(p) * g.out_h + oh) * g.out_w + ow;
        bool routed = false;
        for (int i = 0; i < g.kh; ++i)
          for (int j = 0; j < g.kw; ++j) {
            const int ih = oh * g.stride_h - g.pad_h + i, iw = ow * g.stride_w - g.pad_w + j;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            const std::size_t xi = (std::size_t(p) * g.h + ih) * g.w + iw;
            if (mode == PoolMode::average) {
              dx[xi] += dy[oi] / T(g.kh * g.kw);
            } else if (!routed && x[xi] == y[oi]) {
              dx[xi] += dy[oi];
              routed = true;
            }
          }
      }
}

// ---- relu
template <class T>
void relu_forward(const T* x, T* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : T(0);
}
template <class T>
void relu_backward(const T* y, const T* dy, T* dx, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dx[i] = y[i] > 0 ? dy[i] : T(0);
}

// ---- batch norm (training statistics; running stats with the unbiased variance)
template <class T>
void batchnorm_forward_train(const BatchNormGeom& g, const T* x, const T* gamma, const T* beta,
                             T* running_mean, T* running_var, T* save_mean, T* save_invstd, T* y) {
  const double m = double(g.n) * g.hw;
  for (int c = 0; c < g.c; ++c) {
    double mean = 0, var = 0;
    for (int n = 0; n < g.n; ++n)
      for (int i = 0; i < g.hw; ++i) mean += double(x[(std::size_t(n) * g.c + c) * g.hw + i]);
    mean /= m;
    for (int n = 0; n < g.n; ++n)
      for (int i = 0; i < g.hw; ++i) {
        const double d = double(x[(std::size_t(n) * g.c + c) * g.hw + i]) - mean;
        var += d * d;
      }
    const double unbiased = m > 1 ? var / (m - 1) : var / m;
    var /= m;
    const double invstd = 1.0 / std::sqrt(var + double(g.eps));
    for (int n = 0; n < g.n; ++n)
      for (int i = 0; i < g.hw; ++i) {
        const std::size_t xi = (std::size_t(n) * g.c + c) * g.hw + i;
        y[xi] = T((double(x[xi]) - mean) * invstd * double(gamma[c]) + double(beta[c]));
      }
    if (save_mean) save_mean[c] = T(mean);
    if (save_invstd) save_invstd[c] = T(invstd);
    if (running_mean)
      running_mean[c] =
          T((1 - double(g.momentum)) * double(running_mean[c]) + double(g.momentum) * mean);
    if (running_var)
      running_var[c] =
          T((1 - double(g.momentum)) * double(running_var[c]) + double(g.momentum) * unbiased);
  }
}

template <class T>
void batchnorm_forward_infer(const BatchNormGeom& g, const T* x, const T* gamma, const T* beta,
                             const T* running_mean, const T* running_var, T* y) {
  for (int n = 0; n < g.n; ++n)
    for (int c = 0; c < g.c; ++c)
      for (int i = 0; i < g.hw; ++i) {
        const std::size_t xi = (std::size_t(n) * g.c + c) * g.hw + i;
        y[xi] = T((double(x[xi]) - double(running_mean[c])) /
                      std::sqrt(double(running_var[c]) + double(g.eps)) * double(gamma[c]) +
                  double(beta[c]));
      }
}

// Textbook batch-norm backward, written out term by term (not the fused form the backends use).
template <class T>
void batchnorm_backward(const BatchNormGeom& g, const T* x, const T* dy, const T* gamma,
                        const T* save_mean, const T* save_invstd, T* dx, T* dgamma, T* dbeta) {
  const double m = double(g.n) * g.hw;
  for (int c = 0; c < g.c; ++c) {
    const double mean = double(save_mean[c]), invstd = double(save_invstd[c]);
    double dvar = 0, dmean = 0, dg = 0, db = 0;
    for (int n = 0; n < g.n; ++n)
      for (int i = 0; i < g.hw; ++i) {
        const std::size_t xi = (std::size_t(n) * g.c + c) * g.hw + i;
        const double xc = double(x[xi]) - mean, dxhat = double(dy[xi]) * double(gamma[c]);
        dg += double(dy[xi]) * xc * invstd;
        db += double(dy[xi]);
        dvar += dxhat * xc * -0.5 * invstd * invstd * invstd;
        dmean += -dxhat * invstd;
      }
    for (int n = 0; n < g.n; ++n)
      for (int i = 0; i < g.hw; ++i) {
        const std::size_t xi = (std::size_t(n) * g.c + c) * g.hw + i;
        const double xc = double(x[xi]) - mean, dxhat = double(dy[xi]) * double(gamma[c]);
        // dmean's own term through the variance vanishes (sum of xc is zero).
        dx[xi] = T(dxhat * invstd + dvar * 2.0 * xc / m + dmean / m);
      }
    dgamma[c] = T(dg);
    dbeta[c] = T(db);
  }
}

// ---- dropout
template <class T>
void dropout_forward(const T* x, T* y, T* mask, std::size_t n, float p, std::uint64_t seed,
                     std::uint64_t counter) {
  for (std::size_t i = 0; i < n; ++i) {
    const bool drop = uniform01(hash2(seed, counter + i)) < p;
    mask[i] = drop ? T(0) : T(1) / (T(1) - T(p));
    y[i] = x[i] * mask[i];
  }
}

// ---- softmax cross-entropy: returns the mean loss; dlogits = (softmax - onehot) / n
template <class T>
double softmax_cross_entropy(const T* logits, const std::int32_t* labels, int n, int classes,
                             T* dlogits, double* correct = nullptr) {
  double total = 0;
  int right = 0;
  for (int i = 0; i < n; ++i) {
    const T* row = logits + std::size_t(i) * classes;
    double top = double(row[0]);
    int best = 0;
    for (int j = 1; j < classes; ++j)
      if (row[j] > row[best]) best = j;
    top = double(row[best]);
    double sum = 0;
    for (int j = 0; j < classes; ++j) sum += std::exp(double(row[j]) - top);
    const double lse = top + std::log(sum);
    total += lse - double(row[labels[i]]);
    right += best == labels[i];
    if (dlogits)
      for (int j = 0; j < classes; ++j)
        dlogits[std::size_t(i) * classes + j] =
            T((std::exp(double(row[j]) - lse) - (j == labels[i] ? 1.0 : 0.0)) / n);
  }
  if (correct) *correct = right;
  return total / n;
}

// ---- mean squared error of one output per sample: returns the mean loss over mean_over;
// dpred = 2 (pred - target) / mean_over; *abs_sum (when given) the sum of absolute errors.
template <class T>
double mean_squared_error(const T* pred, const T* targets, int n, T* dpred, int mean_over,
                          double* abs_sum = nullptr) {
  double total = 0, absolute = 0;
  for (int i = 0; i < n; ++i) {
    const double e = double(pred[i]) - double(targets[i]);
    total += e * e;
    absolute += std::fabs(e);
    if (dpred) dpred[i] = T(2 * e / mean_over);
  }
  if (abs_sum) *abs_sum = absolute;
  return total / mean_over;
}

// ---- optimizer (double state, the formulas of backend.h)
inline void optimizer_step(const OptimizerStep& s, double* p, const double* grad, double* s1,
                           double* s2, std::size_t n, double grad_scale = 1.0) {
  for (std::size_t i = 0; i < n; ++i) {
    const double g = grad[i] * grad_scale + double(s.weight_decay) * p[i];
    switch (s.kind) {
      case OptimizerKind::sgdm:
        s1[i] = double(s.momentum) * s1[i] + g;
        p[i] -= double(s.lr) * (s.nesterov ? g + double(s.momentum) * s1[i] : s1[i]);
        break;
      case OptimizerKind::adam: {
        s1[i] = double(s.beta1) * s1[i] + (1 - double(s.beta1)) * g;
        s2[i] = double(s.beta2) * s2[i] + (1 - double(s.beta2)) * g * g;
        const double mhat = s1[i] / (1 - std::pow(double(s.beta1), double(s.t)));
        const double vhat = s2[i] / (1 - std::pow(double(s.beta2), double(s.t)));
        p[i] -= double(s.lr) * mhat / (std::sqrt(vhat) + double(s.eps));
        break;
      }
      case OptimizerKind::rmsprop:
        s1[i] = double(s.alpha) * s1[i] + (1 - double(s.alpha)) * g * g;
        p[i] -= double(s.lr) * g / (std::sqrt(s1[i]) + double(s.eps));
        break;
    }
  }
}

// ---- gather: output pixel (y, x) reads source (y - dy, x - dx), mirrored when flipped.
// Values are (raw * pixel_scale - mean[c]) / stdev[c]: pixel_scale 1/255 for uint8 images, 1 for
// float features; y gets int32 labels, or float targets when d.targets is set.
inline void gather_batch(const GatherDesc& d, const float* mean, const float* stdev, double* x,
                         void* y) {
  for (int i = 0; i < d.batch; ++i) {
    const std::size_t row = std::size_t(d.indices[i]);
    if (d.targets)
      static_cast<float*>(y)[i] = d.targets[row];
    else
      static_cast<std::int32_t*>(y)[i] = d.labels[row];
    const AugmentDraw a = augment_draw(d.seed, d.step, d.first_sample + i, d.flip, d.max_shift);
    for (int c = 0; c < d.c; ++c)
      for (int oy = 0; oy < d.h; ++oy)
        for (int ox = 0; ox < d.w; ++ox) {
          const int sy = oy - a.dy, sx0 = ox - a.dx;
          double v = 0;
          if (sy >= 0 && sy < d.h && sx0 >= 0 && sx0 < d.w) {
            const int sx = a.flip ? d.w - 1 - sx0 : sx0;
            const std::size_t at = ((row * d.c + c) * d.h + sy) * d.w + sx;
            const double raw = d.features ? double(d.features[at]) : d.images[at] / 255.0;
            v = (raw - mean[c]) / stdev[c];
          }
          x[((std::size_t(i) * d.c + c) * d.h + oy) * d.w + ox] = v;
        }
  }
}

}  // namespace sweep::trainer::ref
