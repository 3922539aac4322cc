/*
 * cpu_pool.cpp — max and average pooling, one (sample, channel) plane per loop step.
 *
 * Max pooling ignores padded positions (PyTorch pads with -inf); average pooling counts them as
 * zeros and always divides by kh*kw (PyTorch's count_include_pad default). Max backward does not
 * store indices: it rescans each window for the first element equal to the pooled maximum, which
 * is exactly what cuDNN does, so both backends route gradients to the same element on ties. A 2x2
 * pooling that its convolution computes (Backend::conv2d_forward_maxpool2x2) keeps that element's
 * index instead, a byte a window, found by the same rule.
 * 2x2 windows with stride 2 and no padding (nearly every CNN) take a straight-line fast path.
 */
#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/check.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"

namespace sweep::trainer {

namespace {

struct Window {
  int h0, h1, w0, w1;  // valid input rows [h0, h1) and columns [w0, w1)
};

Window window(const PoolGeom& g, int oh, int ow) {
  const int hs = oh * g.stride_h - g.pad_h, ws = ow * g.stride_w - g.pad_w;
  return {std::max(hs, 0), std::min(hs + g.kh, g.h), std::max(ws, 0), std::min(ws + g.kw, g.w)};
}

// The element of a 2x2 window that takes its gradient: the first (row-major) equal to the
// maximum m, 4 when none is (a NaN in the window; Backend::maxpool2x2_forward_argmax keeps it).
std::uint8_t first_max(float a, float b, float c, float d, float m) {
  return a == m ? 0 : b == m ? 1 : c == m ? 2 : d == m ? 3 : 4;
}

// y, and each window's first_max where ap is not null. A row's maxima first, in a loop of its
// own that the compiler vectorises, then their positions: one loop doing both stays scalar.
void max_2x2_forward(const PoolGeom& g, const float* xp, float* yp, std::uint8_t* ap) {
  for (int oh = 0; oh < g.out_h; ++oh) {
    const float* __restrict__ r0 = xp + std::size_t(2 * oh) * g.w;
    const float* __restrict__ r1 = r0 + g.w;
    float* __restrict__ yr = yp + std::size_t(oh) * g.out_w;
    for (int ow = 0; ow < g.out_w; ++ow)
      yr[ow] = std::max(std::max(r0[2 * ow], r0[2 * ow + 1]), std::max(r1[2 * ow], r1[2 * ow + 1]));
    if (!ap) continue;
    std::uint8_t* ar = ap + std::size_t(oh) * g.out_w;
    for (int ow = 0; ow < g.out_w; ++ow)
      ar[ow] = first_max(r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1], yr[ow]);
  }
}

// Window (oh, ow)'s gradient d to its element f (first_max), zeros to the other three.
void route_2x2(const PoolGeom& g, float* dxp, int oh, int ow, int f, float d) {
  float* d0 = dxp + std::size_t(2 * oh) * g.w + 2 * ow;
  float* d1 = d0 + g.w;
  d0[0] = f == 0 ? d : 0.f;
  d0[1] = f == 1 ? d : 0.f;
  d1[0] = f == 2 ? d : 0.f;
  d1[1] = f == 3 ? d : 0.f;
}

// The first maximum of each window (found again from x and y) takes its gradient.
void max_2x2_backward(const PoolGeom& g, const float* xp, const float* yp, const float* dyp,
                      float* dxp) {
  for (int oh = 0; oh < g.out_h; ++oh) {
    const float* r0 = xp + std::size_t(2 * oh) * g.w;
    const float* r1 = r0 + g.w;
    for (int ow = 0; ow < g.out_w; ++ow) {
      const float m = yp[oh * g.out_w + ow];
      route_2x2(g, dxp, oh, ow,
                first_max(r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1], m),
                dyp[oh * g.out_w + ow]);
    }
  }
}

void max_2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* ap, const float* dyp,
                             float* dxp) {
  for (int oh = 0; oh < g.out_h; ++oh)
    for (int ow = 0; ow < g.out_w; ++ow)
      route_2x2(g, dxp, oh, ow, ap[oh * g.out_w + ow], dyp[oh * g.out_w + ow]);
}

std::size_t planes_per_task(const PoolGeom& g) {
  const std::size_t work = std::size_t(g.out_h) * g.out_w * g.kh * g.kw;
  return std::max<std::size_t>(1, (std::size_t{1} << 15) / std::max<std::size_t>(1, work));
}

}  // namespace

void CpuBackend::pool_forward(const PoolGeom& g, PoolMode mode, const float* x, float* y) {
  const std::size_t planes = std::size_t(g.n) * g.c, in_plane = std::size_t(g.h) * g.w;
  const std::size_t out_plane = std::size_t(g.out_h) * g.out_w;
  const float inv_area = 1.f / static_cast<float>(g.kh * g.kw);
  const bool fast = is_2x2_stride2(g);
  run([&] {
    cpu::for_range(planes, planes_per_task(g), [&](std::size_t p0, std::size_t p1) {
      for (std::size_t p = p0; p < p1; ++p) {
        const float* xp = x + p * in_plane;
        float* yp = y + p * out_plane;
        if (mode == PoolMode::max && fast) {
          max_2x2_forward(g, xp, yp, nullptr);
          continue;
        }
        for (int oh = 0; oh < g.out_h; ++oh) {
          for (int ow = 0; ow < g.out_w; ++ow) {
            const Window win = window(g, oh, ow);
            float out;
            if (mode == PoolMode::max) {
              out = -std::numeric_limits<float>::infinity();
              for (int ih = win.h0; ih < win.h1; ++ih)
                for (int iw = win.w0; iw < win.w1; ++iw) out = std::max(out, xp[ih * g.w + iw]);
            } else {
              float sum = 0.f;
              for (int ih = win.h0; ih < win.h1; ++ih)
                for (int iw = win.w0; iw < win.w1; ++iw) sum += xp[ih * g.w + iw];
              out = sum * inv_area;
            }
            yp[oh * g.out_w + ow] = out;
          }
        }
      }
    });
  });
}

void CpuBackend::pool_backward(const PoolGeom& g, PoolMode mode, const float* x, const float* y,
                               const float* dy, float* dx) {
  const std::size_t planes = std::size_t(g.n) * g.c, in_plane = std::size_t(g.h) * g.w;
  const std::size_t out_plane = std::size_t(g.out_h) * g.out_w;
  const float inv_area = 1.f / static_cast<float>(g.kh * g.kw);
  const bool fast = is_2x2_stride2(g);
  run([&] {
    cpu::for_range(planes, planes_per_task(g), [&](std::size_t p0, std::size_t p1) {
      for (std::size_t p = p0; p < p1; ++p) {
        const float* xp = x + p * in_plane;
        const float* yp = y + p * out_plane;
        const float* dyp = dy + p * out_plane;
        float* dxp = dx + p * in_plane;
        if (mode == PoolMode::max && fast) {
          // Every input of an even-sized plane is written; a trailing odd row/column is not.
          if (g.h % 2 || g.w % 2) std::fill(dxp, dxp + in_plane, 0.f);
          max_2x2_backward(g, xp, yp, dyp, dxp);
          continue;
        }
        std::fill(dxp, dxp + in_plane, 0.f);
        for (int oh = 0; oh < g.out_h; ++oh) {
          for (int ow = 0; ow < g.out_w; ++ow) {
            const Window win = window(g, oh, ow);
            const float grad = dyp[oh * g.out_w + ow];
            if (mode == PoolMode::max) {
              const float best = yp[oh * g.out_w + ow];
              bool routed = false;
              for (int ih = win.h0; ih < win.h1 && !routed; ++ih)
                for (int iw = win.w0; iw < win.w1; ++iw)
                  if (xp[ih * g.w + iw] == best) {
                    dxp[ih * g.w + iw] += grad;
                    routed = true;
                    break;
                  }
            } else {
              const float share = grad * inv_area;
              for (int ih = win.h0; ih < win.h1; ++ih)
                for (int iw = win.w0; iw < win.w1; ++iw) dxp[ih * g.w + iw] += share;
            }
          }
        }
      }
    });
  });
}

void CpuBackend::maxpool2x2_forward_argmax(const PoolGeom& g, const float* x, float* y,
                                           std::uint8_t* argmax) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_forward_argmax on another pooling");
  const std::size_t planes = std::size_t(g.n) * g.c, in_plane = std::size_t(g.h) * g.w;
  const std::size_t out_plane = std::size_t(g.out_h) * g.out_w;
  run([&] {
    cpu::for_range(planes, planes_per_task(g), [&](std::size_t p0, std::size_t p1) {
      for (std::size_t p = p0; p < p1; ++p)
        max_2x2_forward(g, x + p * in_plane, y + p * out_plane,
                        argmax ? argmax + p * out_plane : nullptr);
    });
  });
}

void CpuBackend::conv2d_forward_maxpool2x2(const ConvGeom& g, const float* x, const float* w,
                                           const float* b, float* y, float* pooled,
                                           std::uint8_t* argmax) {
  conv2d_forward(g, x, w, b, y);
  maxpool2x2_forward_argmax(maxpool2x2_of(g), y, pooled, argmax);
}

void CpuBackend::maxpool2x2_backward_argmax(const PoolGeom& g, const std::uint8_t* argmax,
                                            const float* dy, float* dx) {
  if (!is_2x2_stride2(g)) throw Error("internal: maxpool2x2_backward_argmax on another pooling");
  const std::size_t planes = std::size_t(g.n) * g.c, in_plane = std::size_t(g.h) * g.w;
  const std::size_t out_plane = std::size_t(g.out_h) * g.out_w;
  run([&] {
    cpu::for_range(planes, planes_per_task(g), [&](std::size_t p0, std::size_t p1) {
      for (std::size_t p = p0; p < p1; ++p) {
        float* dxp = dx + p * in_plane;
        // Every input of an even-sized plane is written; a trailing odd row/column is not.
        if (g.h % 2 || g.w % 2) std::fill(dxp, dxp + in_plane, 0.f);
        max_2x2_backward_argmax(g, argmax + p * out_plane, dy + p * out_plane, dxp);
      }
    });
  });
}

}  // namespace sweep::trainer
