/*
 * op_geometry.h — a convolution's or a pooling's geometry from its sizes, the output size worked
 * out as the layers do: (in + 2 pad - kernel) / stride + 1, for the op tests.
 */
#pragma once

#include "trainer/backend/backend_types.h"

namespace sweep::trainer::testing {

// n images of c x h x w into k channels by an r x s kernel, one stride and one padding both ways.
inline ConvGeom conv_geom(int n, int c, int h, int w, int k, int r, int s, int stride, int pad) {
  ConvGeom g{n, c, h, w, k, r, s, stride, stride, pad, pad, 0, 0};
  g.out_h = (h + 2 * pad - r) / stride + 1;
  g.out_w = (w + 2 * pad - s) / stride + 1;
  return g;
}

// n images of c x h x w pooled by a k x k window.
inline PoolGeom pool_geom(int n, int c, int h, int w, int k, int stride, int pad) {
  PoolGeom g{n, c, h, w, k, k, stride, stride, pad, pad, 0, 0};
  g.out_h = (h + 2 * pad - k) / stride + 1;
  g.out_w = (w + 2 * pad - k) / stride + 1;
  return g;
}

}  // namespace sweep::trainer::testing
