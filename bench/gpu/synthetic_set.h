/*
 * synthetic_set.h — the GPU step benchmarks' data set (bench_gpu_lenet, bench_gpu_multigraph):
 * `rows` images of random bytes with random labels of 10 classes, and one shuffled order of the
 * rows, all on the backend, drawn from `seed`. Steps gather their batches from it as a trial
 * gathers from a real data set held on the device.
 */
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/network.h"

namespace sweep::trainer::bench {

struct SyntheticSet {
  DeviceBuffer images;  // (rows, C, H, W) uint8
  DeviceBuffer labels;  // (rows) uint8
  DeviceBuffer order;   // (rows) int32: a shuffled order of the rows
  // (2 C) float: GatherDesc's scale then shift of each channel, for mean 0.3 and std 0.35
  DeviceBuffer norm;
  const float* scale() const { return norm.f(); }
  const float* shift(int c) const { return norm.f() + c; }
};

inline SyntheticSet make_synthetic_set(Backend& backend, Shape sample_shape, int rows,
                                       std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::size_t sample = std::size_t(sample_shape.numel()), n = std::size_t(rows);
  std::vector<std::uint8_t> images(sample * n), labels(n);
  for (auto& v : images) v = static_cast<std::uint8_t>(rng() & 255);
  for (auto& v : labels) v = static_cast<std::uint8_t>(rng() % 10);
  std::vector<std::int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<float> norm(std::size_t(sample_shape.c), 1.f / (255.f * 0.35f));
  norm.resize(2 * norm.size(), -0.3f / 0.35f);
  SyntheticSet s{DeviceBuffer(backend, images.size()), DeviceBuffer(backend, labels.size()),
                 DeviceBuffer(backend, order.size() * sizeof(std::int32_t)),
                 DeviceBuffer(backend, norm.size() * sizeof(float))};
  backend.copy_to_device(s.images.as<void>(), images.data(), images.size());
  backend.copy_to_device(s.labels.as<void>(), labels.data(), labels.size());
  backend.copy_to_device(s.order.as<void>(), order.data(), order.size() * sizeof(std::int32_t));
  backend.copy_to_device(s.norm.as<void>(), norm.data(), norm.size() * sizeof(float));
  return s;
}

}  // namespace sweep::trainer::bench
