/*
 * cpu_data.cpp — gather, normalise and augment a mini-batch from a uint8 data set.
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

void CpuBackend::gather_batch(const GatherDesc& d, float* x, std::int32_t* y) {
  const std::size_t plane = std::size_t(d.h) * d.w, sample = plane * d.c;
  if (d.c < 1 || d.c > 4)
    throw Error("gather_batch: images have " + std::to_string(d.c) +
                " channels; 1 to 4 are supported");
  float scale[4], shift[4];  // value = u8 * scale + shift
  for (int c = 0; c < d.c; ++c) {
    scale[c] = 1.f / (255.f * d.stdev[c]);
    shift[c] = -d.mean[c] / d.stdev[c];
  }
  run([&] {
    cpu::for_range(std::size_t(d.batch), 8, [&](std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) {
        const std::size_t row = static_cast<std::size_t>(d.indices[i]);
        const std::uint8_t* src = d.images + row * sample;
        float* dst = x + i * sample;
        y[i] = d.labels[row];
        const AugmentDraw a =
            augment_draw(d.seed, d.step, d.first_sample + static_cast<int>(i), d.flip, d.max_shift);
        for (int c = 0; c < d.c; ++c) {
          const std::uint8_t* sp = src + c * plane;
          float* dp = dst + c * plane;
          for (int oy = 0; oy < d.h; ++oy) {
            const int sy = oy - a.dy;
            float* out = dp + std::size_t(oy) * d.w;
            if (sy < 0 || sy >= d.h) {
              for (int ox = 0; ox < d.w; ++ox) out[ox] = 0.f;
              continue;
            }
            const std::uint8_t* in = sp + std::size_t(sy) * d.w;
            for (int ox = 0; ox < d.w; ++ox) {
              const int sx0 = ox - a.dx;
              if (sx0 < 0 || sx0 >= d.w) {
                out[ox] = 0.f;
                continue;
              }
              const int sx = a.flip ? d.w - 1 - sx0 : sx0;
              out[ox] = float(in[sx]) * scale[c] + shift[c];
            }
          }
        }
      }
    });
  });
}

}  // namespace sweep::trainer
