/*
 * device_dataset.cpp — uploads, and which backends an upload serves.
 */
#include "trainer/data/device_dataset.h"

#include "trainer/data/load_data.h"

namespace sweep::trainer {

DeviceDataset::DeviceDataset(Backend& backend, const Dataset& data)
    : images_(backend, data.images.size()), labels_(backend, data.labels.size()) {
  if (!data.images.empty())
    backend.copy_to_device(images_.as<void>(), data.images.data(), data.images.size());
  if (!data.labels.empty())
    backend.copy_to_device(labels_.as<void>(), data.labels.data(), data.labels.size());
}

SharedUpload::SharedUpload(const DeviceSpec& device, const LoadedData& data)
    : device_(device), owner_(make_backend(DeviceSpec{device.kind, device.index, 1})) {
  train_.emplace(*owner_, data.train);
  if (!data.validation.empty()) validation_.emplace(*owner_, data.validation);
  // Other backends read it from their own streams: the copies must have landed.
  owner_->synchronize();
}

SharedUpload::~SharedUpload() = default;

bool SharedUpload::serves(const DeviceSpec& device) const {
  return device.kind == device_.kind &&
         (device.kind == DeviceKind::cpu || device.index == device_.index);
}

}  // namespace sweep::trainer
