/*
 * shuffle.cpp — Fisher-Yates over mt19937_64 with unbiased bounded draws.
 *
 * The generator for an epoch is seeded with hash2(seed, epoch) (trainer/rng.h) rather than seed +
 * epoch, so neighbouring seeds do not produce shifted copies of each other's orders.
 */
#include "trainer/data/shuffle.h"

#include <numeric>
#include <random>

#include "common/check.h"
#include "trainer/rng.h"

namespace sweep::trainer {

std::vector<std::int32_t> shuffled_indices(std::int64_t n, std::uint64_t seed) {
  if (n < 0 || n > INT32_MAX)
    throw Error("shuffle: data set size " + std::to_string(n) + " out of range");
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::int64_t i = n - 1; i > 0; --i) {
    // Uniform j in [0, i] by rejection: draws above the largest multiple of (i + 1) are redrawn.
    const std::uint64_t range = std::uint64_t(i) + 1;
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    std::uint64_t r;
    do r = rng();
    while (r >= limit);
    std::swap(idx[std::size_t(i)], idx[std::size_t(r % range)]);
  }
  return idx;
}

std::vector<std::int32_t> epoch_order(std::int64_t n, ShuffleMode mode, std::uint64_t seed,
                                      int epoch) {
  switch (mode) {
    case ShuffleMode::never: {
      if (n < 0 || n > INT32_MAX)
        throw Error("shuffle: data set size " + std::to_string(n) + " out of range");
      std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
      std::iota(idx.begin(), idx.end(), 0);
      return idx;
    }
    case ShuffleMode::once:
      return shuffled_indices(n, hash2(seed, 0));
    case ShuffleMode::every_epoch:
      break;
  }
  return shuffled_indices(n, hash2(seed, std::uint64_t(epoch)));
}

}  // namespace sweep::trainer
