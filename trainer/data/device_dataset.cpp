/*
 * device_dataset.cpp — uploads, and which backends an upload serves.
 */
#include "trainer/data/device_dataset.h"

#include "trainer/data/load_data.h"

namespace sweep::trainer {

namespace {

template <class T>
DeviceBuffer upload(Backend& backend, const std::vector<T>& values) {
  DeviceBuffer b(backend, values.size() * sizeof(T));
  if (!values.empty()) backend.copy_to_device(b.as<void>(), values.data(), b.bytes());
  return b;
}

}  // namespace

DeviceDataset::DeviceDataset(Backend& backend, const Dataset& data)
    : images_(upload(backend, data.images)),
      features_(upload(backend, data.features)),
      labels_(upload(backend, data.labels)),
      targets_(upload(backend, data.targets)) {}

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
