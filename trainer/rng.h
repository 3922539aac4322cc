/*
 * rng.h — counter-based random numbers shared by the CPU and CUDA backends.
 *
 * Dropout masks and augmentation draw from hash(seed, counter) instead of a stateful generator, so
 * both backends produce the same numbers in any order and a resumed run redraws exactly what an
 * uninterrupted run would have. splitmix64's finaliser is the hash: cheap and well mixed.
 */
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SWEEP_HD __host__ __device__ __forceinline__
#else
#define SWEEP_HD inline
#endif

namespace sweep::trainer {

SWEEP_HD std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SWEEP_HD std::uint64_t hash2(std::uint64_t seed, std::uint64_t counter) {
  return mix64(seed ^ mix64(counter));
}

// Uniform float in [0, 1) from the top 24 bits.
SWEEP_HD float uniform01(std::uint64_t h) {
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// Per-sample augmentation draw for batch position i at a given step: flip bit and shifts.
struct AugmentDraw {
  bool flip;
  int dy, dx;
};
SWEEP_HD AugmentDraw augment_draw(std::uint64_t seed, std::uint64_t step, int i, bool flip,
                                  int max_shift) {
  std::uint64_t h = hash2(seed, (step << 20) ^ static_cast<std::uint64_t>(i));
  AugmentDraw d{false, 0, 0};
  d.flip = flip && (h & 1u);
  if (max_shift > 0) {
    const std::uint64_t span = 2u * static_cast<std::uint64_t>(max_shift) + 1u;
    d.dy = static_cast<int>((h >> 8) % span) - max_shift;
    d.dx = static_cast<int>((h >> 32) % span) - max_shift;
  }
  return d;
}

}  // namespace sweep::trainer
