/*
 * pnm_decode.cpp — binary PGM (P5, grey) and PPM (P6, RGB) files of 8-bit samples.
 *
 * Header (Netpbm): the magic, then width, height and maxval as decimal numbers separated by
 * whitespace, where '#' starts a comment to the end of its line, then exactly one whitespace
 * byte and the samples, row by row. maxval must be 1..255 (16-bit files are refused); samples
 * above maxval are refused, and samples of a maxval below 255 are scaled to 0..255 as
 * round(v * 255 / maxval). Bytes after the last sample are ignored (Netpbm allows several
 * images in one file; the first is read).
 */
#include <cstdint>

#include "common/check.h"
#include "trainer/data/image_formats.h"

namespace sweep::trainer {

namespace {

struct PnmHeader {
  int channels = 0;
  std::int64_t width = 0, height = 0, maxval = 0;
  std::size_t data_offset = 0;
};

bool is_space(std::uint8_t b) {
  return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f';
}

// The next decimal number from `pos` (after whitespace and comments); refuses what is not one.
std::int64_t read_number(std::span<const std::uint8_t> bytes, std::size_t& pos, const char* what,
                         const std::string& name) {
  for (;;) {
    while (pos < bytes.size() && is_space(bytes[pos])) ++pos;
    if (pos < bytes.size() && bytes[pos] == '#') {
      while (pos < bytes.size() && bytes[pos] != '\n' && bytes[pos] != '\r') ++pos;
      continue;
    }
    break;
  }
  if (pos >= bytes.size() || bytes[pos] < '0' || bytes[pos] > '9')
    throw Error(name + ": not a valid PGM/PPM file: expected its " + what +
                " as a decimal number in the header");
  std::int64_t value = 0;
  while (pos < bytes.size() && bytes[pos] >= '0' && bytes[pos] <= '9') {
    value = value * 10 + (bytes[pos] - '0');
    if (value > (std::int64_t(1) << 31))
      throw Error(name + ": not a valid PGM/PPM file: its " + what + " is too large");
    ++pos;
  }
  return value;
}

PnmHeader read_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '6'))
    throw Error(name + ": not a binary PGM/PPM file (expected P5 or P6)");
  PnmHeader h;
  h.channels = bytes[1] == '5' ? 1 : 3;
  std::size_t pos = 2;
  h.width = read_number(bytes, pos, "width", name);
  h.height = read_number(bytes, pos, "height", name);
  h.maxval = read_number(bytes, pos, "maxval", name);
  check_image_size(h.width, h.height, name);
  if (h.maxval < 1 || h.maxval > 255)
    throw Error(name + ": a PGM/PPM maxval of " + std::to_string(h.maxval) +
                ", expected 1..255 (8-bit samples)");
  if (pos >= bytes.size() || !is_space(bytes[pos]))
    throw Error(name + ": not a valid PGM/PPM file: expected one whitespace byte after maxval");
  h.data_offset = pos + 1;
  return h;
}

}  // namespace

ImageHeader pnm_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  const PnmHeader h = read_header(bytes, name);
  return {h.channels, int(h.height), int(h.width)};
}

RawImage decode_pnm(std::span<const std::uint8_t> bytes, const std::string& name) {
  const PnmHeader h = read_header(bytes, name);
  const std::size_t count = std::size_t(h.width) * std::size_t(h.height) * std::size_t(h.channels);
  if (bytes.size() - h.data_offset < count)
    throw Error(name + ": the file ends early (truncated): expected " + std::to_string(count) +
                " bytes of samples, got " + std::to_string(bytes.size() - h.data_offset));
  RawImage out{h.channels, int(h.height), int(h.width), {}};
  const std::uint8_t* samples = bytes.data() + h.data_offset;
  out.pixels.assign(samples, samples + count);
  if (h.maxval != 255) {
    const int maxval = int(h.maxval);
    for (std::uint8_t& v : out.pixels) {
      if (v > maxval)
        throw Error(name + ": a sample of " + std::to_string(v) + " above the file's maxval " +
                    std::to_string(maxval));
      v = static_cast<std::uint8_t>((v * 255 + maxval / 2) / maxval);
    }
  }
  return out;
}

}  // namespace sweep::trainer
