/*
 * cifar_reader.cpp — concatenate CIFAR-10 binary records.
 *
 * A file must be a whole number of records; any count is accepted (the official files hold 10,000)
 * so that tests and subsets can use small files.
 */
#include "trainer/data/cifar_reader.h"

#include <filesystem>

#include "common/check.h"
#include "trainer/data/file_bytes.h"

namespace sweep::trainer {

namespace {
constexpr std::size_t kImageBytes = kCifar10Channels * kCifar10Side * kCifar10Side;
constexpr std::size_t kRecordBytes = 1 + kImageBytes;
}  // namespace

Dataset read_cifar10_files(const std::vector<std::string>& files) {
  Dataset d;
  d.c = kCifar10Channels;
  d.h = kCifar10Side;
  d.w = kCifar10Side;
  d.classes = kCifar10Classes;
  d.source = files.empty() ? std::string("cifar10") : files.front();
  for (const std::string& path : files) {
    const std::vector<std::uint8_t> bytes = read_file_bytes(path);
    if (bytes.empty()) throw Error(path + ": file is empty (expected 3073-byte CIFAR-10 records)");
    if (bytes.size() % kRecordBytes != 0) {
      const std::size_t whole = bytes.size() / kRecordBytes + 1;
      throw Error(path + ": truncated (expected " + std::to_string(whole * kRecordBytes) +
                  " bytes for " + std::to_string(whole) + " records of 3073, got " +
                  std::to_string(bytes.size()) + ")");
    }
    const std::size_t n = bytes.size() / kRecordBytes;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* rec = bytes.data() + i * kRecordBytes;
      if (rec[0] >= kCifar10Classes)
        throw Error(path + ": label " + std::to_string(rec[0]) + " of record " + std::to_string(i) +
                    " is out of range (expected 0..9)");
      d.labels.push_back(rec[0]);
      d.images.insert(d.images.end(), rec + 1, rec + kRecordBytes);
    }
  }
  return d;
}

Dataset read_cifar10_split(const std::string& dir, const std::string& split) {
  std::string base = dir;
  std::error_code ec;
  if (!std::filesystem::exists(base + "/test_batch.bin", ec) &&
      std::filesystem::exists(base + "/cifar-10-batches-bin/test_batch.bin", ec))
    base += "/cifar-10-batches-bin";
  std::vector<std::string> files;
  if (split == "train") {
    for (int i = 1; i <= 5; ++i)
      files.push_back(base + "/data_batch_" + std::to_string(i) + ".bin");
  } else if (split == "test") {
    files.push_back(base + "/test_batch.bin");
  } else {
    throw Error("cifar10: unknown split '" + split + "' (train or test)");
  }
  return read_cifar10_files(files);
}

}  // namespace sweep::trainer
