/*
 * device_dataset.h — a data set's uint8 images or float features and its labels or float targets
 * in backend memory, and one upload of a run's data shared by every run of the process on the
 * same device.
 *
 * Memory a backend allocates is readable by every backend of the same device (one CUDA context
 * per device and process; host memory for the CPU), so a fused array's members gather their own
 * shuffled batches from one copy of the data set instead of one copy each (64 LeNet members:
 * 64 x 55 MB of Fashion-MNIST otherwise). The copy belongs to a backend of its own, which outlives
 * it and every member that reads it (members hold the upload by shared pointer).
 */
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "trainer/backend/backend.h"
#include "trainer/data/dataset.h"

namespace sweep::trainer {

struct LoadedData;  // trainer/data/load_data.h

class DeviceDataset {
 public:
  // Uploads images or features and labels or targets (asynchronously on `backend`'s stream).
  DeviceDataset(Backend& backend, const Dataset& data);
  // Each null when the data set has the other kind.
  const std::uint8_t* images() const { return images_.as<std::uint8_t>(); }
  const float* features() const { return features_.as<float>(); }
  const std::uint8_t* labels() const { return labels_.as<std::uint8_t>(); }
  const float* targets() const { return targets_.as<float>(); }

 private:
  DeviceBuffer images_, features_, labels_, targets_;
};

class SharedUpload {
 public:
  // Uploads data's training and validation sets to `device` and waits until they are there, so
  // any backend of that device may read them at once. Throws OutOfMemory (or a library's
  // allocation failure) when the device has no room.
  SharedUpload(const DeviceSpec& device, const LoadedData& data);
  ~SharedUpload();
  SharedUpload(const SharedUpload&) = delete;
  SharedUpload& operator=(const SharedUpload&) = delete;

  // Whether a backend for `device` can read this upload: the same device.
  bool serves(const DeviceSpec& device) const;
  const DeviceDataset& train() const { return *train_; }
  const DeviceDataset* validation() const { return validation_ ? &*validation_ : nullptr; }

 private:
  DeviceSpec device_;
  std::unique_ptr<Backend> owner_;  // declared first: destroyed after the buffers it owns
  std::optional<DeviceDataset> train_, validation_;
};

}  // namespace sweep::trainer
