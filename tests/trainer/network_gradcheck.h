/*
 * network_gradcheck.h — a whole Network's parameter gradients on the CPU backend against central
 * differences of its float training loss (softmax cross-entropy over one batch).
 */
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/network.h"

namespace sweep::trainer::testing {

// Every `stride`-th parameter: backward's d(loss)/d(param) against (L(p + h) - L(p - h)) / 2h,
// within 2e-3 + 2e-2 |numeric|. The batch is labels.size() images of `x`. Running statistics are
// put back after every forward, so that they do not move the loss between evaluations. Returns
// how many parameters were checked.
inline std::size_t expect_network_gradient_matches(CpuBackend& cpu, Network& net,
                                                   const std::vector<float>& x,
                                                   const std::vector<std::int32_t>& labels,
                                                   int classes, std::size_t stride, float h) {
  const int batch = int(labels.size());
  std::vector<float> dlogits(std::size_t(batch) * classes);
  auto loss = [&](bool keep_grad) {
    const std::vector<float> state(net.state(), net.state() + net.state_count());
    double stats[2] = {0, 0};
    const float* logits = net.forward(x.data(), batch, true);
    cpu.softmax_cross_entropy(logits, labels.data(), batch, classes,
                              keep_grad ? dlogits.data() : nullptr, stats);
    std::copy(state.begin(), state.end(), net.state());
    return stats[0] / batch;
  };
  loss(true);
  net.backward(dlogits.data(), batch);
  const std::vector<float> grads(net.grads(), net.grads() + net.param_count());
  std::size_t checked = 0;
  for (std::size_t i = 0; i < net.param_count(); i += stride, ++checked) {
    float& p = net.params()[i];
    const float keep = p;
    p = keep + h;
    const double up = loss(false);
    p = keep - h;
    const double down = loss(false);
    p = keep;
    const double numeric = (up - down) / (2.0 * double(h));
    EXPECT_NEAR(grads[i], numeric, 2e-3 + 2e-2 * std::fabs(numeric)) << "parameter " << i;
  }
  return checked;
}

}  // namespace sweep::trainer::testing
