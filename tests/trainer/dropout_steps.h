/*
 * dropout_steps.h — a network's dropout masks follow the step: drawn from (seed, step), so a
 * resumed run redraws the same ones, and never applied at inference.
 */
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "trainer/network.h"

namespace sweep::trainer::testing {

// `batch` images of `x` forward with dropout seed 5: at step 1 twice the same logits, at step 2
// others; the inference forward twice the same. Returns the logits of step 1 (`outputs` values).
inline std::vector<float> expect_dropout_follows_the_step(Network& net, const std::vector<float>& x,
                                                          int batch, std::size_t outputs) {
  auto logits = [&](bool training) {
    const float* y = net.forward(x.data(), batch, training);
    return std::vector<float>(y, y + outputs);
  };
  net.set_dropout_seed(5);
  net.set_step(1);
  const auto t1 = logits(true), t1_again = logits(true);
  net.set_step(2);
  const auto t2 = logits(true);
  EXPECT_EQ(t1, t1_again);  // same seed and step: same mask (resume redraws it)
  EXPECT_NE(t1, t2);
  EXPECT_EQ(logits(false), logits(false));
  return t1;
}

}  // namespace sweep::trainer::testing
