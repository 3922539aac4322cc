/*
 * cifar_reader.h — CIFAR-10 binary batches (data_batch_1..5.bin, test_batch.bin).
 *
 * Each record is 1 label byte followed by 3072 image bytes (3 x 32 x 32, channel-major), which is
 * already our (C, H, W) layout, so records are copied as they are. The directory may be the one
 * holding the .bin files or its parent (the archive unpacks into cifar-10-batches-bin/).
 */
#pragma once

#include <string>
#include <vector>

#include "trainer/data/dataset.h"

namespace sweep::trainer {

// What every CIFAR-10 image is: 3 x 32 x 32, one of 10 classes.
inline constexpr int kCifar10Channels = 3;
inline constexpr int kCifar10Side = 32;
inline constexpr int kCifar10Classes = 10;

// Concatenates the records of `files` (in order). Errors name the file: missing, empty, a size
// that is not a whole number of 3073-byte records (truncated), a label > 9.
Dataset read_cifar10_files(const std::vector<std::string>& files);

// split: "train" (data_batch_1..5.bin) or "test" (test_batch.bin).
Dataset read_cifar10_split(const std::string& dir, const std::string& split);

}  // namespace sweep::trainer
