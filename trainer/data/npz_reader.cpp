/*
 * npz_reader.cpp — the zip format's end record, central directory and local headers
 * (PKWARE's APPNOTE 6.3), and zlib's raw inflate for deflated members.
 *
 * The central directory is the archive's table of contents: found through the end-of-central-
 * directory record at the file's end (after up to 64 KiB of comment), or through the zip64 end
 * record its locator points at when a count, size or offset is 0xFFFF / 0xFFFFFFFF. Each member's
 * sizes, CRC and offset come from its directory entry (its zip64 extra field where a 32-bit field
 * is 0xFFFFFFFF); the local header is read only for its name and extra lengths, because a member
 * written with a data descriptor has zeros there.
 */
#include "trainer/data/npz_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/check.h"
#include "trainer/data/binary_file.h"
#include "trainer/data/file_limits.h"

namespace sweep::trainer {

namespace {

constexpr std::uint32_t kEndRecord = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64EndRecord = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndRecordBytes = 22;
constexpr std::size_t kMaxComment = 65535;
// A directory bigger than this is not an .npz's (a few dozen bytes per array).
constexpr std::uint64_t kMaxDirectoryBytes = std::uint64_t(64) << 20;

// Reads little-endian fields off a byte range, refusing reads past its end.
class Fields {
 public:
  Fields(const std::uint8_t* p, std::size_t n, std::string what) : p_(p), n_(n), what_(what) {}
  std::uint64_t at(std::size_t offset, int bytes) const {
    if (offset + std::size_t(bytes) > n_) throw Error(what_ + " is cut short");
    return little_endian(p_ + offset, bytes);
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::string what_;
};

struct EndInflate {
  void operator()(z_stream* s) const { inflateEnd(s); }
};

}  // namespace

ZipArchive::ZipArchive(std::string path) : path_(std::move(path)) {
  file_size_ = regular_file_size(path_);
  file_ = open_data_file(path_);
  if (file_size_ < kEndRecordBytes)
    throw Error(path_ + ": not a zip archive (.npz): " + std::to_string(file_size_) +
                " bytes, fewer than a zip's end record");

  // The end record: the last "PK\5\6" whose comment length reaches exactly the file's end.
  const std::uint64_t tail_size =
      std::min<std::uint64_t>(file_size_, kEndRecordBytes + kMaxComment);
  const std::uint64_t tail_start = file_size_ - tail_size;
  const std::vector<std::uint8_t> tail = bytes_at(tail_start, tail_size);
  std::size_t end_at = tail.size();
  for (std::size_t i = tail.size() - kEndRecordBytes + 1; i-- > 0;)
    if (little_endian(tail.data() + i, 4) == kEndRecord &&
        i + kEndRecordBytes + little_endian(tail.data() + i + 20, 2) == tail.size()) {
      end_at = i;
      break;
    }
  if (end_at == tail.size())
    throw Error(path_ + ": not a zip archive (.npz): no end-of-central-directory record");
  const std::uint8_t* end = tail.data() + end_at;
  const std::uint64_t end_offset = tail_start + end_at;
  if (little_endian(end + 4, 2) != 0 || little_endian(end + 6, 2) != 0)
    throw Error(path_ + ": a split (multi-disk) zip archive is not read");
  std::uint64_t count = little_endian(end + 10, 2);
  std::uint64_t dir_size = little_endian(end + 12, 4);
  std::uint64_t dir_offset = little_endian(end + 16, 4);
  std::uint64_t dir_end_limit = end_offset;
  if (count == 0xFFFF || dir_size == 0xFFFFFFFF || dir_offset == 0xFFFFFFFF) {
    if (end_offset < 20)
      throw Error(path_ + ": its end record asks for zip64 but there is no zip64 locator");
    const std::vector<std::uint8_t> loc = bytes_at(end_offset - 20, 20);
    if (little_endian(loc.data(), 4) != kZip64Locator)
      throw Error(path_ + ": its end record asks for zip64 but there is no zip64 locator");
    const std::uint64_t end64 = little_endian(loc.data() + 8, 8);
    if (end64 > end_offset - 20 || end_offset - 20 - end64 < 56)
      throw Error(path_ + ": its zip64 end record lies outside the file");
    const std::vector<std::uint8_t> rec = bytes_at(end64, 56);
    if (little_endian(rec.data(), 4) != kZip64EndRecord)
      throw Error(path_ + ": no zip64 end record where its locator points");
    count = little_endian(rec.data() + 32, 8);
    dir_size = little_endian(rec.data() + 40, 8);
    dir_offset = little_endian(rec.data() + 48, 8);
    dir_end_limit = end64;
  }
  if (dir_offset > dir_end_limit || dir_size > dir_end_limit - dir_offset)
    throw Error(path_ + ": its central directory (" + std::to_string(dir_size) + " bytes at " +
                std::to_string(dir_offset) + ") lies outside the file");
  if (dir_size > kMaxDirectoryBytes)
    throw Error(path_ + ": its central directory of " + std::to_string(dir_size) +
                " bytes is too large for an .npz");
  directory_offset_ = dir_offset;
  const std::vector<std::uint8_t> dir = bytes_at(dir_offset, dir_size);

  std::size_t at = 0;
  for (std::uint64_t n = 0; n < count; ++n) {
    const Fields f(dir.data() + at, dir.size() - at,
                   path_ + ": central directory entry " + std::to_string(n + 1));
    if (f.at(0, 4) != kDirectoryEntry)
      throw Error(path_ + ": central directory entry " + std::to_string(n + 1) +
                  " has a bad signature (the directory is corrupt)");
    ZipEntry e;
    const auto flags = std::uint16_t(f.at(8, 2));
    e.method = std::uint16_t(f.at(10, 2));
    e.crc = std::uint32_t(f.at(16, 4));
    e.compressed = f.at(20, 4);
    e.size = f.at(24, 4);
    const std::size_t name_len = f.at(28, 2), extra_len = f.at(30, 2), comment_len = f.at(32, 2);
    const std::uint64_t disk = f.at(34, 2);
    e.local_offset = f.at(42, 4);
    f.at(46 + name_len + extra_len + comment_len - 1, 1);  // all of it inside the directory
    e.name.assign(reinterpret_cast<const char*>(dir.data() + at + 46), name_len);
    // The zip64 extra field holds, in this order, each of these whose 32-bit field is all ones.
    const std::uint8_t* extra = dir.data() + at + 46 + name_len;
    for (std::size_t x = 0; x + 4 <= extra_len;) {
      const std::uint64_t id = little_endian(extra + x, 2), len = little_endian(extra + x + 2, 2);
      if (x + 4 + len > extra_len)
        throw Error(where(e) + ": an extra field runs past its entry (the directory is corrupt)");
      if (id == 0x0001) {
        const Fields z(extra + x + 4, len, where(e) + ": its zip64 extra field");
        std::size_t zat = 0;
        if (e.size == 0xFFFFFFFF) e.size = z.at(zat, 8), zat += 8;
        if (e.compressed == 0xFFFFFFFF) e.compressed = z.at(zat, 8), zat += 8;
        if (e.local_offset == 0xFFFFFFFF) e.local_offset = z.at(zat, 8), zat += 8;
      }
      x += 4 + len;
    }
    if (disk != 0 && disk != 0xFFFF) throw Error(where(e) + ": lies on another disk");
    if (flags & 1) throw Error(where(e) + ": encrypted members are not read");
    if (e.method != 0 && e.method != 8)
      throw Error(where(e) + ": compression method " + std::to_string(e.method) +
                  " is not read (stored and deflated are: np.savez and np.savez_compressed)");
    entries_.push_back(std::move(e));
    at += 46 + name_len + extra_len + comment_len;
  }
}

const ZipEntry* ZipArchive::find(std::string_view name) const {
  for (const ZipEntry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::uint8_t> ZipArchive::bytes_at(std::uint64_t offset, std::uint64_t n) const {
  if (offset > file_size_ || n > file_size_ - offset)
    throw Error(path_ + ": truncated (" + std::to_string(n) + " bytes at " +
                std::to_string(offset) + " lie past its end, " + std::to_string(file_size_) +
                " bytes)");
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n));
  if (::fseeko(file_.get(), off_t(offset), SEEK_SET) != 0)
    throw Error(path_ + ": cannot seek: " + std::strerror(errno));
  if (n > 0 && std::fread(out.data(), 1, out.size(), file_.get()) != out.size())
    throw Error(path_ + ": cannot read " + std::to_string(n) + " bytes at " +
                std::to_string(offset));
  return out;
}

std::uint64_t ZipArchive::data_offset(const ZipEntry& e) const {
  if (e.local_offset > directory_offset_ || directory_offset_ - e.local_offset < 30)
    throw Error(where(e) + ": its local header lies outside the archive's data");
  const std::vector<std::uint8_t> local = bytes_at(e.local_offset, 30);
  if (little_endian(local.data(), 4) != kLocalHeader)
    throw Error(where(e) + ": no local header where the directory points (the archive is corrupt)");
  const std::uint64_t start = e.local_offset + 30 + little_endian(local.data() + 26, 2) +
                              little_endian(local.data() + 28, 2);
  if (start > directory_offset_ || e.compressed > directory_offset_ - start)
    throw Error(where(e) + ": its " + std::to_string(e.compressed) +
                " bytes of data run past the archive's data (truncated or corrupt)");
  return start;
}

std::vector<std::uint8_t> ZipArchive::inflate(const ZipEntry& e, std::size_t max_out,
                                              bool whole) const {
  if (!whole && max_out == 0) return {};
  const std::vector<std::uint8_t> in = bytes_at(data_offset(e), e.compressed);
  // A whole member gets one byte of room past its size, so that more data than it claims shows.
  std::vector<std::uint8_t> out(max_out + (whole ? 1 : 0));
  z_stream s{};
  if (inflateInit2(&s, -MAX_WBITS) != Z_OK) throw Error(where(e) + ": zlib cannot start inflate");
  const std::unique_ptr<z_stream, EndInflate> guard(&s);
  // zlib counts in uInt: fed and drained in pieces of at most 1 GiB.
  constexpr std::size_t kPiece = std::size_t(1) << 30;
  std::size_t in_at = 0, out_at = 0;
  while (true) {
    s.next_in = const_cast<Bytef*>(in.data() + in_at);
    s.avail_in = uInt(std::min(kPiece, in.size() - in_at));
    s.next_out = out.data() + out_at;
    s.avail_out = uInt(std::min(kPiece, out.size() - out_at));
    const uInt in_before = s.avail_in, out_before = s.avail_out;
    const int rc = ::inflate(&s, Z_NO_FLUSH);
    in_at += in_before - s.avail_in;
    out_at += out_before - s.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      throw Error(where(e) + ": corrupt deflate data (" + (s.msg ? s.msg : "zlib") + ")");
    if (out_at == out.size()) {
      if (!whole) return out;
      throw Error(where(e) + ": inflates to more than the " + std::to_string(e.size) +
                  " bytes its directory entry says");
    }
    if (rc == Z_BUF_ERROR)  // no progress with room on both sides: the input ran out
      throw Error(where(e) + ": truncated deflate data (the stream ends before its last block)");
  }
  if (whole && out_at != max_out)
    throw Error(where(e) + ": inflates to " + std::to_string(out_at) +
                " bytes, its directory entry says " + std::to_string(e.size));
  out.resize(out_at);
  return out;
}

std::vector<std::uint8_t> ZipArchive::read(const ZipEntry& e) const {
  check_data_size(path_, "member " + e.name, e.size);
  std::vector<std::uint8_t> out;
  if (e.method == 0) {
    if (e.compressed != e.size)
      throw Error(where(e) + ": stored, yet its sizes differ (" + std::to_string(e.compressed) +
                  " and " + std::to_string(e.size) + " bytes)");
    out = bytes_at(data_offset(e), e.size);
  } else {
    // Deflate expands at most 1032:1: a directory claiming more is refused before its output
    // buffer is allocated (a 1 KB archive must not make the reader reserve 16 GiB).
    if (e.size > e.compressed * 1032 + 1024)
      throw Error(where(e) + ": its directory claims " + std::to_string(e.size) +
                  " bytes inflated from " + std::to_string(e.compressed) +
                  ", more than deflate can produce (the archive is corrupt)");
    out = inflate(e, std::size_t(e.size), true);
  }
  std::uint32_t crc = std::uint32_t(crc32_z(0L, Z_NULL, 0));
  crc = std::uint32_t(crc32_z(crc, out.data(), out.size()));
  if (crc != e.crc) throw Error(where(e) + ": CRC-32 mismatch (the data is corrupt)");
  return out;
}

std::vector<std::uint8_t> ZipArchive::read_prefix(const ZipEntry& e, std::size_t max_bytes) const {
  const std::size_t n = std::size_t(std::min<std::uint64_t>(max_bytes, e.size));
  if (e.method == 0) {
    if (e.compressed != e.size)
      throw Error(where(e) + ": stored, yet its sizes differ (" + std::to_string(e.compressed) +
                  " and " + std::to_string(e.size) + " bytes)");
    return bytes_at(data_offset(e), n);
  }
  return inflate(e, n, false);
}

NpyArray read_npz_array(const ZipArchive& zip, const ZipEntry& e) {
  const std::vector<std::uint8_t> bytes = zip.read(e);
  return parse_npy(bytes.data(), bytes.size(), zip.path() + ":" + e.name);
}

NpyHeader read_npz_header(const ZipArchive& zip, const ZipEntry& e) {
  const std::vector<std::uint8_t> head = zip.read_prefix(e, kNpyMaxHeaderBytes + 12);
  const std::string name = zip.path() + ":" + e.name;
  NpyHeader h = parse_npy_header(head.data(), head.size(), name);
  if (e.size < h.data_offset || e.size - h.data_offset != h.data_bytes())
    throw Error(name + ": its " + std::to_string(e.size) + " bytes do not hold the " +
                std::to_string(h.data_bytes()) + " bytes of data its header (shape " +
                h.shape_text() + ") describes after " + std::to_string(h.data_offset));
  return h;
}

}  // namespace sweep::trainer
