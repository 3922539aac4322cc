/*
 * dataset.h — the one data set type every reader yields and the loop, the backends and the fused
 * arrays read: uint8 images or float features, class labels or float targets.
 *
 * Images stay uint8 (N, C, H, W) until the backend's gather_batch normalises them: a full
 * Fashion-MNIST is 47 MB this way instead of 188 MB as float, and it is uploaded once per run.
 * Data that is float in its file (a float32 .npy, a CSV's columns) is held as float `features`
 * of the same (N, C, H, W) layout instead (a CSV row is C = columns, H = W = 1): exactly one of
 * `images` and `features` is filled. A classification set has `labels` (each < classes); a
 * regression set (classes == 0) has one float `targets` value per row instead.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sweep::trainer {

struct Dataset {
  std::string source;       // where it came from, for messages ("train-images-idx3-ubyte.gz")
  int c = 1, h = 1, w = 1;  // per-sample shape
  int classes = 0;          // of a classification set; 0 for a regression set
  std::vector<std::uint8_t> images;  // (N, C, H, W) uint8 pixels, or empty when features are
  std::vector<float> features;       // (N, C, H, W) float values, or empty when images are
  std::vector<std::uint8_t> labels;  // (N), each < classes (classification)
  std::vector<float> targets;        // (N) (regression)
  // The classes' names in label order (a folder's subfolders sorted, a CSV column's distinct
  // values); empty where the data has none (idx, CIFAR-10 and synthetic sets use numbers).
  std::vector<std::string> class_names;

  bool is_float() const { return !features.empty(); }
  bool is_regression() const { return !targets.empty() || (classes == 0 && labels.empty()); }
  std::int64_t size() const {
    return static_cast<std::int64_t>(is_regression() ? targets.size() : labels.size());
  }
  std::int64_t image_bytes() const { return std::int64_t(c) * h * w; }  // values per sample
  bool empty() const { return size() == 0; }
};

// Rows `rows` of `from` (in that order), same shape and classes.
Dataset take_rows(const Dataset& from, const std::vector<std::int64_t>& rows);
// The first n rows (all when n <= 0 or n >= size).
void keep_first(Dataset& d, std::int64_t n);
// A copy of the first n rows (all when n <= 0 or n >= size): no more copied than is kept.
Dataset first_rows(const Dataset& d, std::int64_t n);

// What one raw value is multiplied by before its channel's statistics apply: 1/255 for uint8
// pixels (the network sees 0..1 before normalising), 1 for float features (taken as written).
inline float input_scale(const Dataset& d) { return d.is_float() ? 1.f : 1.f / 255.f; }

// Per-channel mean and standard deviation of raw value * scale (population std; a constant
// channel gets std 1 so that normalising never divides by zero). The network's input is
// (raw * scale - mean[c]) / stdev[c]. For a CSV's C columns (H = W = 1) this is exactly
// per-feature standardisation. A channel past the vectors' end (a default ChannelStats: no
// normalisation) has mean 0 and std 1.
struct ChannelStats {
  float scale = 1.f / 255.f;
  std::vector<float> mean, stdev;  // (C) each, or empty
  float mean_of(int c) const { return std::size_t(c) < mean.size() ? mean[std::size_t(c)] : 0.f; }
  float stdev_of(int c) const {
    return std::size_t(c) < stdev.size() ? stdev[std::size_t(c)] : 1.f;
  }
};
// The training split's statistics: integer sums for uint8 images, double sums for features.
ChannelStats channel_stats(const Dataset& d);
// No normalisation at d's scale: mean 0, std 1 for each of its channels.
ChannelStats identity_stats(const Dataset& d);

}  // namespace sweep::trainer
