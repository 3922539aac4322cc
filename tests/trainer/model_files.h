/*
 * model_files.h — model files for tests: a preset's network built on a CPU backend from a seed,
 * its batch-norm running statistics drawn away from their initial 0 / 1 (so that a wrong use of
 * them shows), and the model file that holds it.
 */
#pragma once

#include <random>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/model_file.h"
#include "trainer/model_rebuild.h"
#include "trainer/models.h"
#include "trainer/network.h"

namespace sweep::trainer::testing {

// The model file of `spec` for inputs `input` of pixels (or float values) and `classes` classes
// (0: regression), with seeded weights and statistics.
inline ModelFile sample_model_file(const ModelSpec& spec, Shape input, int classes,
                                   bool float_input = false, std::uint64_t seed = 7) {
  auto backend = make_backend(DeviceSpec{});
  Network net(*backend, spec, input, classes, 4, seed);
  ModelFile m;
  m.regression = classes == 0;
  m.outputs = output_units(classes);
  for (int c = 0; c < m.outputs && classes > 0; ++c)
    m.class_names.push_back("class " + std::to_string(c));
  m.input.c = input.c;
  m.input.h = input.h;
  m.input.w = input.w;
  m.input.is_float = float_input;
  m.input.scale = float_input ? 1.f : 1.f / 255.f;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (int c = 0; c < input.c; ++c) {
    m.input.mean.push_back(float_input ? u(rng) * 2 - 1 : 0.2f + 0.1f * float(c));
    m.input.stdev.push_back(0.25f + u(rng));
  }
  m.layers = layer_specs_json(model_layer_specs(spec, classes));
  m.sweep = "tests";
  m.trial = 3;
  m.output_network = "last";
  m.params.resize(net.param_count());
  backend->copy_to_host(m.params.data(), net.params(), m.params.size() * sizeof(float));
  // Batch-norm state is (running mean, running var) per layer: draw both, variances positive.
  m.state.resize(net.state_count());
  for (std::size_t i = 0; i < m.state.size(); ++i) m.state[i] = 0.5f + u(rng);
  return m;
}

}  // namespace sweep::trainer::testing
