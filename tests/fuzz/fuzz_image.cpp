/*
 * fuzz_image.cpp — fuzzes decode_image (trainer/data/image_decode.h): PNG, JPEG and binary
 * PGM/PPM, told by their first bytes, and the conversions and resizes after them.
 *
 * Input: one settings byte, then the image file. The byte picks channels (bits 0-1: as the file,
 * 1, 3, 3), a size (bits 2-3: as the file, 1x1, 5x3, 16x16) and the resize mode (bits 4-5).
 * sweep::Error is the expected refusal; what decodes must hold C x H x W pixels of the channels
 * and size asked for. Images whose header claims more than 2^22 pixels are left out (their
 * header is still read): decoding one is slow, not wrong, and the limits of a few megapixels a
 * side are the image tests' to check.
 */
#include <span>

#include "common/check.h"
#include "fuzz_target.h"
#include "trainer/data/image_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sweep::trainer;
  if (size > kFuzzMaxLen || size < 1) return -1;
  const std::uint8_t pick = data[0];
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  constexpr int kChannels[4] = {0, 1, 3, 3};
  constexpr int kSizes[4][2] = {{0, 0}, {1, 1}, {5, 3}, {16, 16}};
  constexpr ResizeMode kModes[4] = {ResizeMode::stretch, ResizeMode::crop, ResizeMode::pad,
                                    ResizeMode::stretch};
  ImageDecodeSettings settings;
  settings.channels = kChannels[pick & 3];
  settings.height = kSizes[(pick >> 2) & 3][0];
  settings.width = kSizes[(pick >> 2) & 3][1];
  settings.resize = kModes[(pick >> 4) & 3];
  try {
    const ImageHeader header = read_image_header(bytes, "fuzz");
    fuzz_require(header.c == 1 || header.c == 3, "a header says 1 or 3 channels");
    fuzz_require(
        header.h >= 1 && header.w >= 1 && header.h <= kMaxImageSide && header.w <= kMaxImageSide,
        "a header's size is within the limits");
    if (std::int64_t(header.h) * header.w > (std::int64_t(1) << 22)) return 0;
    const DecodedImage image = decode_image(bytes, "fuzz", settings);
    fuzz_require(image.c == (settings.channels ? settings.channels : header.c),
                 "the channels asked for, else the file's");
    fuzz_require(settings.height == 0 || (image.h == settings.height && image.w == settings.width),
                 "the size asked for");
    fuzz_require(settings.height != 0 || (image.h == header.h && image.w == header.w),
                 "the file's size when none is asked for");
    fuzz_require(image.pixels.size() == std::size_t(image.c) * image.h * image.w,
                 "C x H x W pixels");
  } catch (const sweep::Error&) {
  }
  return 0;
}
