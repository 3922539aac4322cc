/*
 * file_bytes.cpp — whole-file reads and in-memory gunzip: libdeflate's whole-buffer decoder,
 * and zlib's inflate to say what is wrong with a stream libdeflate refuses.
 *
 * libdeflate because a sweep's first trial waits for its data set's decode, and libdeflate's
 * whole-buffer decoder is several times faster than zlib's inflate on it (bench/RESULTS.md, "Data
 * readers"). It checks each member's CRC and size as zlib does, but its only verdict
 * on a bad stream is "bad data"; zlib then decodes the same bytes to name the fault. inflate (not
 * gzread) because gzread hides a truncated stream: it returns the bytes it could decode and the
 * truncation shows up only later, as a confusing size error. Here a stream that ends before its
 * trailer is reported as truncated, naming the file. Concatenated gzip members (what `cat a.gz
 * b.gz` makes) are all decoded, as gunzip does.
 */
#include "trainer/data/file_bytes.h"

#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <optional>

#include "common/check.h"

namespace sweep::trainer {

namespace {

bool is_gzip(const std::vector<std::uint8_t>& raw) {
  return raw.size() >= 2 && raw[0] == 0x1f && raw[1] == 0x8b;
}

// The decoded size to start at: the size the last member's trailer gives (a one-member file's
// whole size, mod 2^32) when it is no more than 4x the compressed size, else 4x (idx images
// compress 2-5x); the buffer doubles when full. In a truncated file the trailer is random bytes,
// hence the bound; a right guess spares zeroing and faulting in pages that are never written
// (Fashion-MNIST's training images: 47 MB against 105 MB).
std::size_t first_guess(const std::vector<std::uint8_t>& in) {
  const std::size_t bound = in.size() * 4 + 1024;
  if (in.size() >= 18) {
    const std::uint8_t* t = in.data() + in.size() - 4;
    const std::size_t isize = std::size_t(t[0]) | std::size_t(t[1]) << 8 | std::size_t(t[2]) << 16 |
                              std::size_t(t[3]) << 24;
    if (isize > 0 && isize <= bound) return isize;
  }
  return bound;
}

struct FreeDecompressor {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Every member decoded by libdeflate, or nothing when it refuses the stream (then zlib says why).
std::optional<std::vector<std::uint8_t>> libdeflate_gunzip(const std::vector<std::uint8_t>& in) {
  const std::unique_ptr<libdeflate_decompressor, FreeDecompressor> d(
      libdeflate_alloc_decompressor());
  if (!d) throw std::bad_alloc();
  std::vector<std::uint8_t> out(first_guess(in));
  std::size_t consumed = 0, produced = 0;
  while (consumed < in.size()) {
    std::size_t in_bytes = 0, out_bytes = 0;
    const libdeflate_result rc = libdeflate_gzip_decompress_ex(
        d.get(), in.data() + consumed, in.size() - consumed, out.data() + produced,
        out.size() - produced, &in_bytes, &out_bytes);
    if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) {  // the member again, into a buffer twice the size
      out.resize(out.size() * 2);
      continue;
    }
    if (rc != LIBDEFLATE_SUCCESS) return std::nullopt;
    consumed += in_bytes;
    produced += out_bytes;
  }
  out.resize(produced);
  return out;
}

std::vector<std::uint8_t> zlib_gunzip(const std::vector<std::uint8_t>& in,
                                      const std::string& path) {
  std::vector<std::uint8_t> out(first_guess(in));
  z_stream zs{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (not zlib's own framing).
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    throw Error(path + ": cannot start gzip decompression (zlib inflateInit2 failed)");
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  std::size_t produced = 0;
  int rc = Z_OK;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      if (inflateReset(&zs) != Z_OK) break;  // another gzip member follows
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      throw Error(path + ": gzip stream is truncated (ended after " + std::to_string(in.size()) +
                  " compressed bytes, before its end marker)");
    }
    if (rc == Z_BUF_ERROR) continue;  // output full: grow and go on
    const std::string msg = zs.msg ? zs.msg : "error " + std::to_string(rc);
    inflateEnd(&zs);
    throw Error(path + ": gzip stream is corrupt (zlib: " + msg + ")");
  }
  inflateEnd(&zs);
  out.resize(produced);
  return out;
}

std::vector<std::uint8_t> gunzip(const std::vector<std::uint8_t>& in, const std::string& path) {
  if (auto out = libdeflate_gunzip(in)) return std::move(*out);
  return zlib_gunzip(in, path);
}

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": file is missing");
  if (std::filesystem::is_directory(path, ec)) throw Error(path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(raw.data()), size))
    throw Error(path + ": read failed after " + std::to_string(in.gcount()) + " of " +
                std::to_string(size) + " bytes");
  return is_gzip(raw) ? gunzip(raw, path) : raw;
}

std::string find_plain_or_gz(const std::string& base) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(base, ec)) return base;
  if (std::filesystem::is_regular_file(base + ".gz", ec)) return base + ".gz";
  return {};
}

}  // namespace sweep::trainer
