/*
 * dataset.h — a labelled image data set held on the host as uint8, exactly as the files store it.
 *
 * Images stay uint8 (N, C, H, W) until the backend's gather_batch normalises them: a full
 * Fashion-MNIST is 47 MB this way instead of 188 MB as float, and it is uploaded once per run.
 */
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sweep::trainer {

struct Dataset {
  std::string source;       // where it came from, for messages ("train-images-idx3-ubyte.gz")
  int c = 1, h = 1, w = 1;  // per-image shape
  int classes = 0;
  std::vector<std::uint8_t> images;  // (N, C, H, W)
  std::vector<std::uint8_t> labels;  // (N), each < classes

  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
  std::int64_t image_bytes() const { return std::int64_t(c) * h * w; }
  bool empty() const { return labels.empty(); }
};

// Rows `rows` of `from` (in that order), same shape and classes.
Dataset take_rows(const Dataset& from, const std::vector<std::int64_t>& rows);
// The first n rows (all when n <= 0 or n >= size).
void keep_first(Dataset& d, std::int64_t n);
// A copy of the first n rows (all when n <= 0 or n >= size): no more copied than is kept.
Dataset first_rows(const Dataset& d, std::int64_t n);

// Per-channel mean and standard deviation of pixel / 255 (population std; a constant channel gets
// std 1 so that normalising never divides by zero).
struct ChannelStats {
  std::array<float, 4> mean{0, 0, 0, 0};
  std::array<float, 4> stdev{1, 1, 1, 1};
};
ChannelStats channel_stats(const Dataset& d);

}  // namespace sweep::trainer
