/*
 * shuffle.h — the order in which an epoch visits the training set.
 *
 * The order is a pure function of (seed, epoch): a resumed run recomputes exactly the order an
 * uninterrupted run would have used, so the checkpoint needs no generator state.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/vocabulary.h"

namespace sweep::trainer {

// A permutation of 0..n-1 from std::mt19937_64(seed): Fisher-Yates with rejection sampling, so
// the result does not depend on the standard library.
std::vector<std::int32_t> shuffled_indices(std::int64_t n, std::uint64_t seed);

// The order of epoch `epoch` (0-based): every-epoch reshuffles from hash(seed, epoch); once uses
// epoch 0's order for every epoch; never is 0..n-1.
std::vector<std::int32_t> epoch_order(std::int64_t n, ShuffleMode mode, std::uint64_t seed,
                                      int epoch);

}  // namespace sweep::trainer
