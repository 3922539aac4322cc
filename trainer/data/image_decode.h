/*
 * image_decode.h — one image file (PNG, JPEG, binary PGM/PPM) decoded to uint8 CHW pixels,
 * optionally converted to 1 or 3 channels and resized: what a `dataset: folder` load does for
 * each of its files, and what `sweep predict` does for one image.
 *
 * The format is recognised by its magic bytes, never by the file name. Conversions:
 *   - grey + alpha / RGBA: the alpha channel is dropped (not composited);
 *   - palette PNGs are expanded to RGB; 16-bit PNG samples are reduced to their high byte;
 *   - RGB -> grey by ITU-R BT.601 luma in integers, as Pillow's convert("L"):
 *     L = (R*299 + G*587 + B*114) / 1000; grey -> RGB copies the grey value.
 * Resizing (only when height/width are set and differ from the file's): see ResizeMode in
 * trainer/vocabulary.h and image_resize.h.
 * Every error is a sweep::Error naming the file (`name`) and the decoder's reason; a header
 * claiming more than 16384 pixels a side or 2^28 pixels is refused before any pixel is decoded.
 *
 *   DecodedImage im = decode_image_file("cats/001.png", {.channels = 3, .height = 32, .width =
 * 32});
 *   // im.c == 3, im.h == 32, im.w == 32, im.pixels.size() == 3 * 32 * 32
 */
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trainer/vocabulary.h"

namespace sweep::trainer {

struct ImageDecodeSettings {
  int channels = 0;           // 1 or 3; 0: as the file (1 for grey, 3 for colour)
  int height = 0, width = 0;  // both 0: as the file; both set: resized to this
  ResizeMode resize = ResizeMode::stretch;
};

struct DecodedImage {
  int c = 0, h = 0, w = 0;
  std::vector<std::uint8_t> pixels;  // (C, H, W)
};

// The largest image file read (bytes), refused by its size before reading.
inline constexpr std::int64_t kMaxImageFileBytes = std::int64_t(256) << 20;
// The largest image a header may claim: per side, and in pixels.
inline constexpr int kMaxImageSide = 16384;
inline constexpr std::int64_t kMaxImagePixels = std::int64_t(1) << 28;

// Reads and decodes the file at `path`. Throws sweep::Error naming `path`.
DecodedImage decode_image_file(const std::string& path, const ImageDecodeSettings& settings);

// The bytes of the image file at `path`, refused by its size (over kMaxImageFileBytes) before
// reading, or when it is not a regular file. Throws sweep::Error naming `path`.
std::vector<std::uint8_t> read_image_file(const std::string& path);

// Decodes the bytes of one image file; `name` is what messages call it. Throws sweep::Error.
DecodedImage decode_image(std::span<const std::uint8_t> bytes, const std::string& name,
                          const ImageDecodeSettings& settings);

// The file's own size and channels (1 or 3) from its header alone, without decoding pixels.
struct ImageHeader {
  int c = 0, h = 0, w = 0;
};
ImageHeader read_image_header(std::span<const std::uint8_t> bytes, const std::string& name);

}  // namespace sweep::trainer
