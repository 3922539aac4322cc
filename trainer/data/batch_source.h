/*
 * batch_source.h — a data set uploaded to the backend once, and mini-batches gathered from it.
 *
 * The data (uint8 images or float features, labels or float targets) and each channel's
 * normalisation factors go to backend memory once per run. Each epoch's visiting order is
 * computed on the host and uploaded once per epoch as int32; a step passes a pointer into it, so a
 * training step moves no data between host and device. The last batch of an epoch keeps the
 * remainder (PyTorch's drop_last=False), except a remainder of exactly one image, which is dropped:
 * batch normalisation cannot estimate a variance from one sample (PyTorch refuses such a batch).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/data/dataset.h"
#include "trainer/data/device_dataset.h"
#include "trainer/data/shuffle.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// Each channel's normalisation factors, as GatherDesc takes them: value = (raw - center[c]) *
// scale[c] + shift[c]. Pixels: center 0, scale 1 / (255 std), shift -mean / std (the float
// expressions both backends have always used); float features: center mean, scale 1 / std,
// shift 0 (subtracting first keeps the digits of a feature of large mean and small spread).
// Throws when `stats` were taken at another scale than `data`'s (pixel statistics for float
// features, or the reverse).
struct GatherFactors {
  std::vector<float> center, scale, shift;  // (C) each
};
GatherFactors gather_factors(const Dataset& data, const ChannelStats& stats);

class BatchSource {
 public:
  // `batch` is the largest batch; augmentation applies only to gathers with augment = true.
  // `for_training` drops a final batch of one image; evaluation keeps every image. `uploaded`:
  // data's images and labels already in memory this backend reads (a SharedUpload's), else null
  // and they are uploaded here.
  BatchSource(Backend& backend, const Dataset& data, const ChannelStats& norm, int batch,
              ShuffleMode shuffle, std::uint64_t seed, const AugmentSpec& augment,
              bool for_training, const DeviceDataset* uploaded = nullptr);

  // Uploads the order of `epoch` (0-based).
  void begin_epoch(int epoch);

  std::int64_t size() const { return size_; }
  int batch() const { return batch_; }
  std::int64_t batches_per_epoch() const;
  int batch_size_at(std::int64_t batch_index) const;  // images in batch `batch_index` of an epoch

  // x (b, C, H, W) normalised floats, y (b) int32 labels (float targets for a regression set),
  // for batch `batch_index` of the current epoch. `step` (the global iteration) seeds the
  // augmentation draws. Returns b.
  int gather(std::int64_t batch_index, std::uint64_t step, bool augment, float* x, void* y);
  // Rows [begin, begin + count) of that batch only (a data-parallel replica's share), drawn as
  // the whole batch's gather would draw them. Returns count.
  int gather_part(std::int64_t batch_index, int begin, int count, std::uint64_t step, bool augment,
                  float* x, void* y);

  const std::uint8_t* images() const { return desc_.images; }  // where gathers read (tests)
  const float* features() const { return desc_.features; }

 private:
  Backend& backend_;
  std::int64_t size_;
  int batch_;
  ShuffleMode shuffle_;
  std::uint64_t seed_;
  bool for_training_;
  bool order_uploaded_ = false;
  GatherDesc desc_{};
  std::optional<DeviceDataset> own_;  // the upload, unless one was given
  DeviceBuffer order_;
  DeviceBuffer factors_;  // (3 C): GatherDesc's center, scale and shift
};

}  // namespace sweep::trainer
