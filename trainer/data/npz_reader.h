/*
 * npz_reader.h — an .npz (what np.savez and np.savez_compressed write): a zip archive whose
 * members are .npy files, read through its central directory.
 *
 * Read are members stored (method 0) or deflated (method 8), with zip64 sizes and offsets where
 * the archive needs them (numpy writes zip64 extra fields for its members), each member's CRC-32
 * checked when it is read whole. Refused, naming the archive and the member: a file without an
 * end-of-central-directory record, split archives, encrypted members, other compression methods,
 * a member whose data lies outside the file, sizes over max_data_bytes(), a member that inflates
 * to another size than its directory says, a CRC mismatch. Nothing is ever written, so member
 * names are only compared, never used as paths.
 */
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/data/binary_file.h"
#include "trainer/data/npy_reader.h"

namespace sweep::trainer {

struct ZipEntry {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint64_t compressed = 0;  // bytes in the archive
  std::uint64_t size = 0;        // bytes once inflated
  std::uint64_t local_offset = 0;
};

class ZipArchive {
 public:
  // Opens `path` and reads its central directory.
  explicit ZipArchive(std::string path);

  const std::string& path() const { return path_; }
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The member called `name`, or null.
  const ZipEntry* find(std::string_view name) const;
  // A member's bytes, whole, its size and CRC-32 checked.
  std::vector<std::uint8_t> read(const ZipEntry& e) const;
  // A member's first min(max_bytes, size) bytes (no CRC check: the rest is not read).
  std::vector<std::uint8_t> read_prefix(const ZipEntry& e, std::size_t max_bytes) const;

 private:
  std::vector<std::uint8_t> bytes_at(std::uint64_t offset, std::uint64_t n) const;
  std::uint64_t data_offset(const ZipEntry& e) const;
  std::vector<std::uint8_t> inflate(const ZipEntry& e, std::size_t max_out, bool whole) const;
  std::string where(const ZipEntry& e) const { return path_ + " (member " + e.name + ")"; }

  std::string path_;
  DataFile file_;
  std::uint64_t file_size_ = 0;
  std::uint64_t directory_offset_ = 0;  // members' data all lies before it
  std::vector<ZipEntry> entries_;
};

// The member `name` (e.g. "x_train.npy") of an .npz as an array; messages name "ARCHIVE:name".
NpyArray read_npz_array(const ZipArchive& zip, const ZipEntry& e);
// Only its header (its first bytes inflated).
NpyHeader read_npz_header(const ZipArchive& zip, const ZipEntry& e);

}  // namespace sweep::trainer
