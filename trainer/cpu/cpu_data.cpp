/*
 * cpu_data.cpp — gather, normalise and augment a mini-batch from a uint8 or float data set.
 *
 * Augmentation is defined as an inverse map so both backends compute each output pixel alone:
 * with the draw (flip, dy, dx) of trainer/rng.h's augment_draw, output pixel (y, x) reads the
 * source pixel (y - dy, x' ) with x' = x - dx, mirrored to W - 1 - x' when flipped ("flip, then
 * shift": the flipped image moves by +dy rows and +dx columns). Pixels that come from outside the
 * image are 0 in the normalised output (zero padding of the network input).
 */
#include <string>

#include "common/check.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"
#include "trainer/rng.h"

namespace sweep::trainer {

namespace {

// Sample i of the batch from row `row` of `src` (uint8 pixels or float features), normalised and
// augmented as backend.h's GatherDesc says.
template <class T>
void gather_sample(const GatherDesc& d, const T* src, float* dst, std::size_t i) {
  const std::size_t plane = std::size_t(d.h) * d.w;
  const AugmentDraw a =
      augment_draw(d.seed, d.step, d.first_sample + static_cast<int>(i), d.flip, d.max_shift);
  for (int c = 0; c < d.c; ++c) {
    const T* sp = src + c * plane;
    float* dp = dst + c * plane;
    const float center = d.center ? d.center[c] : 0.f, scale = d.scale[c], shift = d.shift[c];
    for (int oy = 0; oy < d.h; ++oy) {
      const int sy = oy - a.dy;
      float* out = dp + std::size_t(oy) * d.w;
      if (sy < 0 || sy >= d.h) {
        for (int ox = 0; ox < d.w; ++ox) out[ox] = 0.f;
        continue;
      }
      const T* in = sp + std::size_t(sy) * d.w;
      for (int ox = 0; ox < d.w; ++ox) {
        const int sx0 = ox - a.dx;
        if (sx0 < 0 || sx0 >= d.w) {
          out[ox] = 0.f;
          continue;
        }
        const int sx = a.flip ? d.w - 1 - sx0 : sx0;
        out[ox] = (float(in[sx]) - center) * scale + shift;
      }
    }
  }
}

}  // namespace

void CpuBackend::gather_batch(const GatherDesc& d, float* x, void* y) {
  const std::size_t sample = std::size_t(d.h) * d.w * std::size_t(d.c);
  if (d.c < 1) throw Error("gather_batch: samples have " + std::to_string(d.c) + " channels");
  if (!d.images == !d.features || !d.labels == !d.targets || !d.scale || !d.shift)
    throw Error(
        "gather_batch: needs one of images / features, one of labels / targets, and the "
        "normalisation factors");
  run([&] {
    cpu::for_range(std::size_t(d.batch), 8, [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) {
        const std::size_t row = static_cast<std::size_t>(d.indices[i]);
        if (d.targets)
          static_cast<float*>(y)[i] = d.targets[row];
        else
          static_cast<std::int32_t*>(y)[i] = d.labels[row];
        float* dst = x + i * sample;
        if (d.features)
          gather_sample(d, d.features + row * sample, dst, i);
        else
          gather_sample(d, d.images + row * sample, dst, i);
      }
    });
  });
}

}  // namespace sweep::trainer
