/*
 * layer.cpp — what every layer shares: binding to the flat buffers, the PyTorch-compatible uniform
 * draw, and reading whole-number arguments of a LayerSpec with messages a user can act on.
 */
#include "trainer/layers/layer.h"

#include <cmath>

#include "common/check.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

std::string Layer::describe() const { return type(); }

void Layer::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  backend_ = &backend;
  params_ = params;
  grads_ = grads;
  state_ = state;
}

float uniform_symmetric(std::mt19937_64& rng, float bound) {
  const double u = static_cast<double>(rng() >> 40) * (1.0 / 16777216.0);  // [0, 1)
  return static_cast<float>((2.0 * u - 1.0) * bound);
}

int int_arg(const LayerSpec& spec, const std::string& key, int min_value, const int* fallback) {
  const auto it = spec.num.find(key);
  if (it == spec.num.end()) {
    if (spec.str.count(key))
      throw Error("argument '" + key + "' must be a number, not '" + spec.str.at(key) + "'");
    if (fallback) return *fallback;
    throw Error("missing required argument '" + key + "'");
  }
  const double v = it->second;
  if (!std::isfinite(v) || v != std::floor(v) || v > 1e9)
    throw Error("argument '" + key + "' must be a whole number, got " + std::to_string(v));
  if (v < min_value)
    throw Error("argument '" + key + "' must be at least " + std::to_string(min_value) + ", got " +
                std::to_string(static_cast<long long>(v)));
  return static_cast<int>(v);
}

}  // namespace sweep::trainer
