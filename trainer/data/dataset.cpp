/*
 * dataset.cpp — row selection and channel statistics.
 *
 * Statistics of uint8 images are summed in double over integer pixel values (exact up to 2^53 per
 * channel), so the mean and std of 60,000 images do not depend on summation order; float
 * features are summed in double.
 */
#include "trainer/data/dataset.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

#include "common/check.h"

namespace sweep::trainer {

namespace {

// A data set of d's shape, classes and names, with no rows.
Dataset same_kind(const Dataset& d) {
  Dataset out;
  out.source = d.source;
  out.c = d.c, out.h = d.h, out.w = d.w;
  out.classes = d.classes;
  out.class_names = d.class_names;
  return out;
}

// Appends row r of `from` to `to` (whichever of images / features and labels / targets it has).
void append_row(const Dataset& from, std::int64_t r, Dataset& to) {
  const std::size_t per = static_cast<std::size_t>(from.image_bytes());
  const std::size_t at = static_cast<std::size_t>(r) * per;
  if (from.is_float())
    to.features.insert(to.features.end(), from.features.begin() + std::ptrdiff_t(at),
                       from.features.begin() + std::ptrdiff_t(at + per));
  else
    to.images.insert(to.images.end(), from.images.begin() + std::ptrdiff_t(at),
                     from.images.begin() + std::ptrdiff_t(at + per));
  if (from.is_regression())
    to.targets.push_back(from.targets[static_cast<std::size_t>(r)]);
  else
    to.labels.push_back(from.labels[static_cast<std::size_t>(r)]);
}

}  // namespace

Dataset take_rows(const Dataset& from, const std::vector<std::int64_t>& rows) {
  Dataset out = same_kind(from);
  const std::size_t per = static_cast<std::size_t>(from.image_bytes());
  (from.is_float() ? out.features.reserve(rows.size() * per)
                   : out.images.reserve(rows.size() * per));
  for (const std::int64_t r : rows) {
    if (r < 0 || r >= from.size())
      throw Error("take_rows: row " + std::to_string(r) + " outside a data set of " +
                  std::to_string(from.size()));
    append_row(from, r, out);
  }
  return out;
}

void keep_first(Dataset& d, std::int64_t n) {
  if (n <= 0 || n >= d.size()) return;
  const auto rows = static_cast<std::size_t>(n);
  const auto values = static_cast<std::size_t>(n * d.image_bytes());
  if (d.is_regression())
    d.targets.resize(rows);
  else
    d.labels.resize(rows);
  if (d.is_float())
    d.features.resize(values);
  else
    d.images.resize(values);
}

Dataset first_rows(const Dataset& d, std::int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  Dataset out = same_kind(d);
  const auto values = std::ptrdiff_t(n * d.image_bytes());
  if (d.is_regression())
    out.targets.assign(d.targets.begin(), d.targets.begin() + n);
  else
    out.labels.assign(d.labels.begin(), d.labels.begin() + n);
  if (d.is_float())
    out.features.assign(d.features.begin(), d.features.begin() + values);
  else
    out.images.assign(d.images.begin(), d.images.begin() + values);
  return out;
}

namespace {

// Channel ch's mean and variance of raw value * scale: uint8 pixels summed as integers (exact), so
// the result does not depend on summation order.
std::pair<double, double> pixel_moments(const Dataset& d, int ch) {
  const std::int64_t hw = std::int64_t(d.h) * d.w;
  double sum = 0, sum_sq = 0;
  for (std::int64_t n = 0; n < d.size(); ++n) {
    const std::uint8_t* p = d.images.data() + (n * d.c + ch) * hw;
    std::uint64_t s1 = 0, s2 = 0;
    for (std::int64_t i = 0; i < hw; ++i) {
      s1 += p[i];
      s2 += std::uint64_t(p[i]) * p[i];
    }
    sum += double(s1);
    sum_sq += double(s2);
  }
  const double count = double(d.size()) * double(hw);
  const double mean = sum / count / 255.0;
  return {mean, sum_sq / count / (255.0 * 255.0) - mean * mean};
}

// The same of float features, in double and in two passes (mean, then squared deviations from
// it): features of large mean and small spread keep their variance.
std::pair<double, double> feature_moments(const Dataset& d, int ch) {
  const std::int64_t hw = std::int64_t(d.h) * d.w;
  const double count = double(d.size()) * double(hw);
  double sum = 0;
  for (std::int64_t n = 0; n < d.size(); ++n) {
    const float* p = d.features.data() + (n * d.c + ch) * hw;
    for (std::int64_t i = 0; i < hw; ++i) sum += double(p[i]);
  }
  const double mean = sum / count;
  double sum_sq = 0;
  for (std::int64_t n = 0; n < d.size(); ++n) {
    const float* p = d.features.data() + (n * d.c + ch) * hw;
    for (std::int64_t i = 0; i < hw; ++i) sum_sq += (double(p[i]) - mean) * (double(p[i]) - mean);
  }
  return {mean, sum_sq / count};
}

}  // namespace

ChannelStats identity_stats(const Dataset& d) {
  ChannelStats s;
  s.scale = input_scale(d);
  s.mean.assign(std::size_t(std::max(d.c, 0)), 0.f);
  s.stdev.assign(std::size_t(std::max(d.c, 0)), 1.f);
  return s;
}

ChannelStats channel_stats(const Dataset& d) {
  ChannelStats s = identity_stats(d);
  if (d.empty()) return s;
  for (int ch = 0; ch < d.c; ++ch) {
    const auto [mean, raw_var] = d.is_float() ? feature_moments(d, ch) : pixel_moments(d, ch);
    const double var = std::max(0.0, raw_var);
    s.mean[std::size_t(ch)] = static_cast<float>(mean);
    s.stdev[std::size_t(ch)] = var > 1e-12 ? static_cast<float>(std::sqrt(var)) : 1.0f;
  }
  return s;
}

}  // namespace sweep::trainer
