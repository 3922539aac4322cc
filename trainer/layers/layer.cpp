/*
 * layer.cpp — what every layer shares: binding to the flat buffers, the PyTorch-compatible uniform
 * draw, and reading whole-number arguments of a LayerSpec with messages a user can act on.
 */
#include "trainer/layers/layer.h"

#include <cmath>
#include <utility>

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

LayerError LayerError::in_layer(std::size_t index, const std::string& prefix,
                                const Error& problem) {
  std::vector<std::size_t> path{index};
  if (const auto* inner = dynamic_cast<const LayerError*>(&problem))
    path.insert(path.end(), inner->path().begin(), inner->path().end());
  return LayerError(prefix + problem.what(), std::move(path));
}

float uniform_symmetric(std::mt19937_64& rng, float bound) {
  const double u = static_cast<double>(rng() >> 40) * (1.0 / 16777216.0);  // [0, 1)
  return static_cast<float>((2.0 * u - 1.0) * bound);
}

}  // namespace sweep::trainer
