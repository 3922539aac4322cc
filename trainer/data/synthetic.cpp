/*
 * synthetic.cpp — prototype + noise images from std::mt19937_64.
 *
 * Only the generator's raw 64-bit output is used (no std distributions, whose algorithms differ
 * between standard libraries), so the same seed gives the same data on every platform.
 */
#include "trainer/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/check.h"

namespace sweep::trainer {

Dataset make_synthetic(const SyntheticSpec& spec, const std::string& split) {
  if (spec.classes < 2 || spec.classes > 256)
    throw Error("synthetic: classes must be 2..256, not " + std::to_string(spec.classes));
  if (spec.channels < 1 || spec.channels > 4 || spec.height < 1 || spec.width < 1)
    throw Error("synthetic: bad image shape " + std::to_string(spec.channels) + "x" +
                std::to_string(spec.height) + "x" + std::to_string(spec.width));
  const bool train = split == "train";
  if (!train && split != "test") throw Error("synthetic: unknown split '" + split + "'");
  const int n = train ? spec.train_size : spec.test_size;
  if (n < 0) throw Error("synthetic: negative " + split + " size");

  const std::size_t per = std::size_t(spec.channels) * spec.height * spec.width;
  std::mt19937_64 proto_rng(spec.seed);
  std::vector<std::uint8_t> prototypes(per * std::size_t(spec.classes));
  for (auto& p : prototypes) p = static_cast<std::uint8_t>(proto_rng() >> 56);

  // Distinct streams for train and test noise, both derived from the seed.
  std::mt19937_64 rng(spec.seed * 0x9e3779b97f4a7c15ull + (train ? 1 : 2));
  Dataset d;
  d.source = "synthetic(" + split + ")";
  d.c = spec.channels;
  d.h = spec.height;
  d.w = spec.width;
  d.classes = spec.classes;
  d.images.resize(per * std::size_t(n));
  d.labels.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    const auto label = static_cast<int>(rng() % std::uint64_t(spec.classes));
    d.labels[std::size_t(i)] = static_cast<std::uint8_t>(label);
    const std::uint8_t* proto = prototypes.data() + per * std::size_t(label);
    std::uint8_t* img = d.images.data() + per * std::size_t(i);
    for (std::size_t k = 0; k < per; ++k) {
      const int noise = static_cast<int>(rng() >> 57) - 64;  // uniform in [-64, 63]
      img[k] = static_cast<std::uint8_t>(std::clamp(int(proto[k]) + 2 * noise, 0, 255));
    }
  }
  return d;
}

namespace {

// Uniform in [-1, 1) from the generator's top 53 bits.
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1p-52 - 1.0; }

}  // namespace

Dataset make_synthetic_regression(const SyntheticSpec& spec, const std::string& split) {
  if (spec.channels < 1 || spec.height < 1 || spec.width < 1 ||
      std::int64_t(spec.channels) * spec.height * spec.width > (1 << 20))
    throw Error("synthetic: bad feature shape " + std::to_string(spec.channels) + "x" +
                std::to_string(spec.height) + "x" + std::to_string(spec.width));
  const bool train = split == "train";
  if (!train && split != "test") throw Error("synthetic: unknown split '" + split + "'");
  const int n = train ? spec.train_size : spec.test_size;
  if (n < 0) throw Error("synthetic: negative " + split + " size");

  const std::size_t per = std::size_t(spec.channels) * spec.height * spec.width;
  std::mt19937_64 weight_rng(spec.seed);
  std::vector<double> w(per);
  for (double& v : w) v = unit(weight_rng) / std::sqrt(double(per));
  std::mt19937_64 rng(spec.seed * 0x9e3779b97f4a7c15ull + (train ? 1 : 2));
  Dataset d;
  d.source = "synthetic regression(" + split + ")";
  d.c = spec.channels;
  d.h = spec.height;
  d.w = spec.width;
  d.classes = 0;
  d.features.resize(per * std::size_t(n));
  d.targets.resize(std::size_t(n));
  for (int i = 0; i < n; ++i) {
    float* x = d.features.data() + per * std::size_t(i);
    double y = 2.0;
    for (std::size_t k = 0; k < per; ++k) {
      x[k] = static_cast<float>(unit(rng));
      y += w[k] * double(x[k]);
    }
    d.targets[std::size_t(i)] = static_cast<float>(y + 0.05 * unit(rng));
  }
  return d;
}

}  // namespace sweep::trainer
