/*
 * png_decode.cpp — PNG through libpng's classic API.
 *
 * libpng reports errors by longjmp. Jumping over a C++ frame whose objects have destructors is
 * undefined, so the two functions that call setjmp (read_png_header, read_png_rows) hold only
 * trivial locals and take their buffers, allocated by the caller, as plain pointers; the error
 * callback copies libpng's message into a fixed char array and jumps back there. Transforms:
 * palette -> RGB, grey of 1/2/4 bits -> 8, 16 bits -> the high byte, alpha stripped (a tRNS
 * chunk is ignored), interlaced images de-interlaced.
 */
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/check.h"
#include "trainer/data/image_formats.h"

namespace sweep::trainer {

namespace {

struct PngSource {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;
  char message[256] = {};
};

void on_png_error(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof source->message, "%s", message);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}  // warnings leave the pixels usable

void read_from_memory(png_structp png, png_bytep out, png_size_t length) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (length > source->size - source->pos) png_error(png, "the file ends early (truncated)");
  std::memcpy(out, source->data + source->pos, length);
  source->pos += length;
}

struct PngLayout {
  png_uint_32 width = 0, height = 0;
  int channels = 0;
  std::size_t rowbytes = 0;
};

// Reads the header and sets the transforms. False on a libpng error (the message in `source`).
bool read_png_header(png_structp png, png_infop info, PngLayout* layout) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  const int color_type = png_get_color_type(png, info);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  png_set_strip_16(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  layout->width = png_get_image_width(png, info);
  layout->height = png_get_image_height(png, info);
  layout->channels = png_get_channels(png, info);
  layout->rowbytes = png_get_rowbytes(png, info);
  return true;
}

// Reads the pixels into the rows. False on a libpng error (the message in `source`).
bool read_png_rows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  return true;
}

// The read struct and its info, destroyed together.
class PngReader {
 public:
  explicit PngReader(PngSource& source, const std::string& name) {
    png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, on_png_error, on_png_warning);
    if (png_) info_ = png_create_info_struct(png_);
    if (!png_ || !info_) throw Error(name + ": cannot start the PNG decoder (out of memory)");
    png_set_read_fn(png_, &source, read_from_memory);
  }
  ~PngReader() { png_destroy_read_struct(&png_, info_ ? &info_ : nullptr, nullptr); }
  PngReader(const PngReader&) = delete;
  PngReader& operator=(const PngReader&) = delete;
  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

 private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

[[noreturn]] void refuse_png(const std::string& name, const PngSource& source) {
  throw Error(name + ": not a valid PNG file: " + source.message);
}

}  // namespace

ImageHeader png_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  PngSource source{bytes.data(), bytes.size()};
  PngReader reader(source, name);
  PngLayout layout;
  if (!read_png_header(reader.png(), reader.info(), &layout)) refuse_png(name, source);
  check_image_size(layout.width, layout.height, name);
  return {layout.channels == 1 ? 1 : 3, int(layout.height), int(layout.width)};
}

RawImage decode_png(std::span<const std::uint8_t> bytes, const std::string& name) {
  PngSource source{bytes.data(), bytes.size()};
  PngReader reader(source, name);
  PngLayout layout;
  if (!read_png_header(reader.png(), reader.info(), &layout)) refuse_png(name, source);
  check_image_size(layout.width, layout.height, name);
  if (layout.channels != 1 && layout.channels != 3)
    throw Error(name + ": a PNG of " + std::to_string(layout.channels) +
                " channels after its transforms, expected 1 or 3");
  RawImage out{layout.channels, int(layout.height), int(layout.width), {}};
  if (layout.rowbytes != std::size_t(out.w) * std::size_t(out.c))
    throw Error(name + ": a PNG row of " + std::to_string(layout.rowbytes) + " bytes, expected " +
                std::to_string(std::size_t(out.w) * std::size_t(out.c)));
  // Deflate expands at most 1032-fold: a file too short to hold the pixels its header claims is
  // refused before they are allocated (a few hundred bytes cannot make libpng fill 768 MB).
  if (layout.rowbytes * layout.height > bytes.size() * 1032 + 4096)
    throw Error(name + ": not a valid PNG file: " + std::to_string(bytes.size()) +
                " bytes cannot hold the " + std::to_string(layout.width) + " x " +
                std::to_string(layout.height) + " image its header claims (truncated)");
  out.pixels.resize(layout.rowbytes * layout.height);
  std::vector<png_bytep> rows(layout.height);
  for (png_uint_32 y = 0; y < layout.height; ++y) rows[y] = out.pixels.data() + y * layout.rowbytes;
  if (!read_png_rows(reader.png(), rows.data())) refuse_png(name, source);
  return out;
}

}  // namespace sweep::trainer
