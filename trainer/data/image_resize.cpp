/*
 * image_resize.cpp — bilinear resampling of (C, H, W) uint8 planes; the modes of image_resize.h.
 */
#include "trainer/data/image_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sweep::trainer {

namespace {

// For each output coordinate: the lower input index and the weight of the one after it.
struct Taps {
  std::vector<int> lo, hi;
  std::vector<float> weight;
};

Taps taps(int in, int out) {
  Taps t;
  t.lo.resize(out);
  t.hi.resize(out);
  t.weight.resize(out);
  const double scale = double(in) / double(out);
  for (int i = 0; i < out; ++i) {
    double f = (i + 0.5) * scale - 0.5;
    if (f < 0) f = 0;
    int lo = static_cast<int>(std::floor(f));
    double a = f - lo;
    if (lo >= in - 1) {
      lo = in - 1;
      a = 0;
    }
    t.lo[i] = lo;
    t.hi[i] = std::min(lo + 1, in - 1);
    t.weight[i] = static_cast<float>(a);
  }
  return t;
}

// Each of `c` planes of `in_h` x `in_w` resampled to `out_h` x `out_w`.
DecodedImage bilinear(const DecodedImage& in, int out_h, int out_w) {
  DecodedImage out{in.c, out_h, out_w, {}};
  out.pixels.resize(std::size_t(in.c) * out_h * out_w);
  const Taps ty = taps(in.h, out_h), tx = taps(in.w, out_w);
  for (int ch = 0; ch < in.c; ++ch) {
    const std::uint8_t* plane = in.pixels.data() + std::size_t(ch) * in.h * in.w;
    std::uint8_t* dst = out.pixels.data() + std::size_t(ch) * out_h * out_w;
    for (int y = 0; y < out_h; ++y) {
      const std::uint8_t* r0 = plane + std::size_t(ty.lo[y]) * in.w;
      const std::uint8_t* r1 = plane + std::size_t(ty.hi[y]) * in.w;
      const float ay = ty.weight[y];
      for (int x = 0; x < out_w; ++x) {
        const float ax = tx.weight[x];
        const int x0 = tx.lo[x], x1 = tx.hi[x];
        const float top = r0[x0] + ax * (float(r0[x1]) - float(r0[x0]));
        const float bottom = r1[x0] + ax * (float(r1[x1]) - float(r1[x0]));
        const float v = top + ay * (bottom - top);
        dst[std::size_t(y) * out_w + x] =
            static_cast<std::uint8_t>(std::clamp(static_cast<int>(v + 0.5f), 0, 255));
      }
    }
  }
  return out;
}

// The `height` x `width` window of `in` at (top, left).
DecodedImage window(const DecodedImage& in, int top, int left, int height, int width) {
  DecodedImage out{in.c, height, width, {}};
  out.pixels.resize(std::size_t(in.c) * height * width);
  for (int ch = 0; ch < in.c; ++ch)
    for (int y = 0; y < height; ++y)
      std::memcpy(out.pixels.data() + (std::size_t(ch) * height + y) * width,
                  in.pixels.data() + (std::size_t(ch) * in.h + top + y) * in.w + left, width);
  return out;
}

// `in` centred on a zero `height` x `width`.
DecodedImage centred(const DecodedImage& in, int height, int width) {
  DecodedImage out{in.c, height, width, {}};
  out.pixels.assign(std::size_t(in.c) * height * width, 0);
  const int top = (height - in.h) / 2, left = (width - in.w) / 2;
  for (int ch = 0; ch < in.c; ++ch)
    for (int y = 0; y < in.h; ++y)
      std::memcpy(out.pixels.data() + (std::size_t(ch) * height + top + y) * width + left,
                  in.pixels.data() + (std::size_t(ch) * in.h + y) * in.w, in.w);
  return out;
}

int scaled(int side, double scale) {
  return std::max(1, static_cast<int>(std::lround(side * scale)));
}

}  // namespace

DecodedImage resize_image(const DecodedImage& image, int height, int width, ResizeMode mode) {
  if (image.h == height && image.w == width) return image;
  const double sy = double(height) / image.h, sx = double(width) / image.w;
  switch (mode) {
    case ResizeMode::crop: {
      const double s = std::max(sy, sx);
      const int h = std::max(height, scaled(image.h, s)), w = std::max(width, scaled(image.w, s));
      return window(bilinear(image, h, w), (h - height) / 2, (w - width) / 2, height, width);
    }
    case ResizeMode::pad: {
      const double s = std::min(sy, sx);
      const int h = std::min(height, scaled(image.h, s)), w = std::min(width, scaled(image.w, s));
      return centred(bilinear(image, h, w), height, width);
    }
    case ResizeMode::stretch:
      break;
  }
  return bilinear(image, height, width);
}

}  // namespace sweep::trainer
