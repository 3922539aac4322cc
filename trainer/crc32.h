/*
 * crc32.h — the CRC-32 (zlib's, the zip and gzip one) of a byte range of any length, as sweep's
 * files (checkpoints, model files, .npz members) carry it. zlib's crc32 takes a 32-bit length, so
 * longer ranges go in chunks. Include only where zlib is linked.
 */
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace sweep::trainer {

inline std::uint32_t crc32_of(const void* data, std::size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(n, std::size_t(1) << 30));
    crc = crc32(crc, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace sweep::trainer
