/*
 * same_passes.h — two networks that must compute the same numbers: an inference forward, a
 * training forward and a backward of each on one random input and output gradient, logits and
 * gradients compared bit for bit (a fold, a fallback or a second backend changes no number).
 */
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gradcheck.h"
#include "trainer/network.h"

namespace sweep::trainer::testing {

// `in` is one sample's shape; the input and then the output gradient are drawn from `rng`.
inline void expect_same_passes(Network& a, Network& b, Shape in, int batch, int classes,
                               std::mt19937_64& rng) {
  const auto x = to_float(random_vector(std::size_t(batch) * std::size_t(in.numel()), rng));
  const auto d = to_float(random_vector(std::size_t(batch) * classes, rng));
  for (bool training : {false, true}) {  // training last: backward follows it
    const float* la = a.forward(x.data(), batch, training);
    const float* lb = b.forward(x.data(), batch, training);
    EXPECT_EQ(std::vector<float>(la, la + batch * classes),
              std::vector<float>(lb, lb + batch * classes))
        << (training ? "training" : "inference") << " logits";
  }
  a.backward(d.data(), batch);
  b.backward(d.data(), batch);
  EXPECT_EQ(std::vector<float>(a.grads(), a.grads() + a.param_count()),
            std::vector<float>(b.grads(), b.grads() + b.param_count()));
}

}  // namespace sweep::trainer::testing
