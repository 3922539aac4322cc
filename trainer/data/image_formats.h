/*
 * image_formats.h — the three decoders behind decode_image (image_decode.h), each for one format
 * recognised by its magic bytes: PNG (libpng), JPEG (TurboJPEG), binary PGM / PPM (our own).
 *
 * Each yields the file's own pixels, interleaved (H, W, C) with C = 1 (grey) or 3 (RGB), at the
 * file's size; alpha is dropped, palettes expanded, 16-bit samples cut to their high byte. Each
 * checks the header's size against kMaxImageSide / kMaxImagePixels before allocating, and throws
 * sweep::Error naming `name` with the decoder's reason for anything it cannot decode.
 */
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "trainer/data/image_decode.h"

namespace sweep::trainer {

struct RawImage {
  int c = 0, h = 0, w = 0;
  std::vector<std::uint8_t> pixels;  // (H, W, C)
};

enum class ImageFormat { png, jpeg, pnm, unknown };
ImageFormat image_format_of(std::span<const std::uint8_t> bytes);

RawImage decode_png(std::span<const std::uint8_t> bytes, const std::string& name);
RawImage decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name);
RawImage decode_pnm(std::span<const std::uint8_t> bytes, const std::string& name);

ImageHeader png_header(std::span<const std::uint8_t> bytes, const std::string& name);
ImageHeader jpeg_header(std::span<const std::uint8_t> bytes, const std::string& name);
ImageHeader pnm_header(std::span<const std::uint8_t> bytes, const std::string& name);

// Throws sweep::Error naming `name` when w x h is not a size we decode (each side in
// 1..kMaxImageSide, at most kMaxImagePixels pixels).
void check_image_size(std::int64_t w, std::int64_t h, const std::string& name);

}  // namespace sweep::trainer
