/*
 * dataset.cpp — row selection and channel statistics.
 *
 * Statistics are summed in double over integer pixel values (exact up to 2^53 per channel), so
 * the mean and std of 60,000 images do not depend on summation order.
 */
#include "trainer/data/dataset.h"

#include <cmath>
#include <cstring>

#include "common/check.h"

namespace sweep::trainer {

Dataset take_rows(const Dataset& from, const std::vector<std::int64_t>& rows) {
  Dataset out;
  out.source = from.source;
  out.c = from.c;
  out.h = from.h;
  out.w = from.w;
  out.classes = from.classes;
  const std::int64_t per = from.image_bytes();
  out.images.resize(rows.size() * static_cast<std::size_t>(per));
  out.labels.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::int64_t r = rows[i];
    if (r < 0 || r >= from.size())
      throw Error("take_rows: row " + std::to_string(r) + " outside a data set of " +
                  std::to_string(from.size()));
    std::memcpy(out.images.data() + i * per, from.images.data() + r * per,
                static_cast<std::size_t>(per));
    out.labels[i] = from.labels[static_cast<std::size_t>(r)];
  }
  return out;
}

void keep_first(Dataset& d, std::int64_t n) {
  if (n <= 0 || n >= d.size()) return;
  d.labels.resize(static_cast<std::size_t>(n));
  d.images.resize(static_cast<std::size_t>(n * d.image_bytes()));
}

Dataset first_rows(const Dataset& d, std::int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  Dataset out;
  out.source = d.source;
  out.c = d.c, out.h = d.h, out.w = d.w;
  out.classes = d.classes;
  out.labels.assign(d.labels.begin(), d.labels.begin() + n);
  out.images.assign(d.images.begin(), d.images.begin() + n * d.image_bytes());
  return out;
}

ChannelStats channel_stats(const Dataset& d) {
  ChannelStats s;
  if (d.empty()) return s;
  if (d.c > 4)
    throw Error(d.source + ": " + std::to_string(d.c) + " channels; at most 4 are supported");
  const std::int64_t hw = std::int64_t(d.h) * d.w;
  for (int ch = 0; ch < d.c; ++ch) {
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
    const double var = std::max(0.0, sum_sq / count / (255.0 * 255.0) - mean * mean);
    s.mean[ch] = static_cast<float>(mean);
    s.stdev[ch] = var > 1e-12 ? static_cast<float>(std::sqrt(var)) : 1.0f;
  }
  return s;
}

}  // namespace sweep::trainer
