/*
 * image_decode.cpp — the format by magic bytes, then channels, then size (image_decode.h).
 *
 * Channels are converted before resizing, so a colour file read as grey is the luma of the file's
 * own pixels, as Pillow's img.convert("L").resize(...) gives.
 */
#include "trainer/data/image_decode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/check.h"
#include "trainer/data/image_formats.h"
#include "trainer/data/image_resize.h"

namespace sweep::trainer {

namespace {

RawImage decode_raw(std::span<const std::uint8_t> bytes, const std::string& name) {
  switch (image_format_of(bytes)) {
    case ImageFormat::png:
      return decode_png(bytes, name);
    case ImageFormat::jpeg:
      return decode_jpeg(bytes, name);
    case ImageFormat::pnm:
      return decode_pnm(bytes, name);
    case ImageFormat::unknown:
      break;
  }
  throw Error(name + ": not an image sweep reads (expected PNG, JPEG, or binary PGM/PPM, " +
              "recognised by their first bytes)");
}

// (H, W, C) of the file to (C, H, W) of `channels`.
DecodedImage planar(const RawImage& raw, int channels) {
  const std::size_t plane = std::size_t(raw.h) * raw.w;
  DecodedImage out{channels, raw.h, raw.w, {}};
  out.pixels.resize(plane * channels);
  std::uint8_t* dst = out.pixels.data();
  const std::uint8_t* src = raw.pixels.data();
  if (raw.c == 1) {
    for (int ch = 0; ch < channels; ++ch) std::memcpy(dst + ch * plane, src, plane);
  } else if (channels == 3) {
    for (std::size_t i = 0; i < plane; ++i) {
      dst[i] = src[3 * i];
      dst[plane + i] = src[3 * i + 1];
      dst[2 * plane + i] = src[3 * i + 2];
    }
  } else {  // ITU-R BT.601 luma in integers, as Pillow's convert("L")
    for (std::size_t i = 0; i < plane; ++i)
      dst[i] = static_cast<std::uint8_t>(
          (src[3 * i] * 299 + src[3 * i + 1] * 587 + src[3 * i + 2] * 114) / 1000);
  }
  return out;
}

}  // namespace

void check_image_size(std::int64_t w, std::int64_t h, const std::string& name) {
  if (w < 1 || h < 1 || w > kMaxImageSide || h > kMaxImageSide || w * h > kMaxImagePixels)
    throw Error(name + ": the header claims an image of " + std::to_string(w) + " x " +
                std::to_string(h) + " pixels; sweep reads 1.." + std::to_string(kMaxImageSide) +
                " pixels a side and at most " + std::to_string(kMaxImagePixels) + " pixels");
}

ImageFormat image_format_of(std::span<const std::uint8_t> bytes) {
  static constexpr std::uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPng, 8) == 0) return ImageFormat::png;
  if (bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
    return ImageFormat::jpeg;
  if (bytes.size() >= 2 && bytes[0] == 'P' && (bytes[1] == '5' || bytes[1] == '6'))
    return ImageFormat::pnm;
  return ImageFormat::unknown;
}

ImageHeader read_image_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  switch (image_format_of(bytes)) {
    case ImageFormat::png:
      return png_header(bytes, name);
    case ImageFormat::jpeg:
      return jpeg_header(bytes, name);
    case ImageFormat::pnm:
      return pnm_header(bytes, name);
    case ImageFormat::unknown:
      break;
  }
  return {decode_raw(bytes, name).c, 0, 0};  // throws: not an image
}

DecodedImage decode_image(std::span<const std::uint8_t> bytes, const std::string& name,
                          const ImageDecodeSettings& settings) {
  if (settings.channels != 0 && settings.channels != 1 && settings.channels != 3)
    throw Error(name + ": channels must be 1 or 3, not " + std::to_string(settings.channels));
  if ((settings.height == 0) != (settings.width == 0) || settings.height < 0 || settings.width < 0)
    throw Error(name + ": an image size needs both a height and a width, each at least 1");
  if (settings.height > 0) check_image_size(settings.width, settings.height, name);
  const RawImage raw = decode_raw(bytes, name);
  DecodedImage image = planar(raw, settings.channels == 0 ? raw.c : settings.channels);
  if (settings.height == 0) return image;
  return resize_image(image, settings.height, settings.width, settings.resize);
}

std::vector<std::uint8_t> read_image_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd == -1) throw Error(path + ": cannot open the image: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat file {};
  if (::fstat(fd, &file) != 0)
    throw Error(path + ": cannot read the image: " + std::strerror(errno));
  if (!S_ISREG(file.st_mode)) throw Error(path + ": not a regular file");
  if (file.st_size > kMaxImageFileBytes)
    throw Error(path + ": an image file of " + std::to_string(file.st_size) +
                " bytes; sweep reads image files of at most " + std::to_string(kMaxImageFileBytes) +
                " bytes");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(file.st_size));
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n == -1 && errno == EINTR) continue;
    if (n == -1) throw Error(path + ": cannot read the image: " + std::strerror(errno));
    if (n == 0) break;  // the file shrank while read: decoding the bytes there says so
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

DecodedImage decode_image_file(const std::string& path, const ImageDecodeSettings& settings) {
  return decode_image(read_image_file(path), path, settings);
}

}  // namespace sweep::trainer
