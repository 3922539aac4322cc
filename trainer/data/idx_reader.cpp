/*
 * idx_reader.cpp — parse idx3 (images) and idx1 (labels) files.
 *
 * The header is big-endian: magic (0x00000803 images, 0x00000801 labels), then one 32-bit size per
 * dimension. A file longer than its header says is accepted (trailing bytes ignored, as
 * torchvision does); a shorter one is "truncated" with the byte counts.
 */
#include "trainer/data/idx_reader.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/data/file_bytes.h"

namespace sweep::trainer {

namespace {

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) |
         std::uint32_t(p[3]);
}

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// Checks magic and size; returns the dims.
std::vector<std::uint32_t> parse_header(const std::vector<std::uint8_t>& bytes,
                                        const std::string& path, std::uint32_t want_magic,
                                        int ndims, const char* what) {
  const std::size_t header = 4 + 4 * std::size_t(ndims);
  if (bytes.size() < 4)
    throw Error(path + ": truncated (expected at least 4 bytes of idx header, got " +
                std::to_string(bytes.size()) + ")");
  const std::uint32_t magic = be32(bytes.data());
  if (magic != want_magic)
    throw Error(path + ": bad magic " + hex32(magic) + " (an idx " + what + " file starts with " +
                hex32(want_magic) + ")");
  if (bytes.size() < header)
    throw Error(path + ": truncated (expected " + std::to_string(header) +
                " bytes of header, got " + std::to_string(bytes.size()) + ")");
  std::vector<std::uint32_t> dims(static_cast<std::size_t>(ndims));
  for (int i = 0; i < ndims; ++i) dims[std::size_t(i)] = be32(bytes.data() + 4 + 4 * i);
  // The payload is the product of the sizes. Sizes near 2^32 multiply past 2^64, and a product
  // that wrapped around would pass the size check: such a header is reported as it is written.
  std::size_t payload = 1;
  bool wrapped = false;
  if (std::find(dims.begin(), dims.end(), 0u) != dims.end())
    payload = 0;
  else
    for (const std::uint32_t dim : dims)
      wrapped = __builtin_mul_overflow(payload, std::size_t(dim), &payload) || wrapped;
  if (wrapped) {
    std::string sizes;
    for (const std::uint32_t dim : dims)
      sizes += (sizes.empty() ? "" : " x ") + std::to_string(dim);
    throw Error(path + ": truncated (expected " + sizes + " bytes after the header, got " +
                std::to_string(bytes.size() - header) + ")");
  }
  if (bytes.size() - header < payload)
    throw Error(path + ": truncated (expected " + std::to_string(header + payload) +
                " bytes, got " + std::to_string(bytes.size()) + ")");
  return dims;
}

}  // namespace

Dataset read_idx_pair(const std::string& images_path, const std::string& labels_path, int classes) {
  std::vector<std::uint8_t> img = read_file_bytes(images_path);
  const auto idims = parse_header(img, images_path, 0x00000803u, 3, "images");
  const std::vector<std::uint8_t> lab = read_file_bytes(labels_path);
  const auto ldims = parse_header(lab, labels_path, 0x00000801u, 1, "labels");
  if (idims[0] != ldims[0])
    throw Error(images_path + " holds " + std::to_string(idims[0]) + " images but " + labels_path +
                " holds " + std::to_string(ldims[0]) + " labels");
  // The engine holds an image's shape in ints: its pixel count must fit one.
  if (idims[1] == 0 || idims[2] == 0 ||
      std::uint64_t(idims[1]) * idims[2] > std::uint64_t(std::numeric_limits<int>::max()))
    throw Error(images_path + ": images of size " + std::to_string(idims[1]) + "x" +
                std::to_string(idims[2]));

  Dataset d;
  d.source = images_path;
  d.c = 1;
  d.h = static_cast<int>(idims[1]);
  d.w = static_cast<int>(idims[2]);
  d.classes = classes;
  const std::size_t n = idims[0];
  // The pixels stay in the bytes read (the header moved out of the way in place), not copied
  // into fresh pages: the copy's page faults cost more than the copy itself.
  img.erase(img.begin(), img.begin() + 16);
  img.resize(n * std::size_t(d.h) * d.w);
  d.images = std::move(img);
  d.labels.assign(lab.begin() + 8, lab.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i)
    if (d.labels[i] >= classes)
      throw Error(labels_path + ": label " + std::to_string(d.labels[i]) + " at index " +
                  std::to_string(i) + " is out of range (expected 0.." +
                  std::to_string(classes - 1) + ")");
  return d;
}

Dataset read_idx_split(const std::string& dir, const std::string& split, int classes) {
  const std::string images_base = dir + "/" + split + "-images-idx3-ubyte";
  const std::string labels_base = dir + "/" + split + "-labels-idx1-ubyte";
  const std::string images = find_plain_or_gz(images_base);
  if (images.empty())
    throw Error(images_base + ": file is missing (nor is there " + images_base + ".gz)");
  const std::string labels = find_plain_or_gz(labels_base);
  if (labels.empty())
    throw Error(labels_base + ": file is missing (nor is there " + labels_base + ".gz)");
  return read_idx_pair(images, labels, classes);
}

}  // namespace sweep::trainer
