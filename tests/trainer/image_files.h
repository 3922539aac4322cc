/*
 * image_files.h — small image files written by tests: PNG (libpng's simplified writer), JPEG
 * (TurboJPEG), binary PGM/PPM, and a temporary folder to hold them.
 */
#pragma once

#include <gtest/gtest.h>
#include <png.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/test_dir.h"

namespace sweep::trainer::test_images {

namespace fs = std::filesystem;

class TempDir : public sweep::testing::TestDir {
 public:
  TempDir() : TestDir("sweep_image_test") {}
};

inline void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `pixels` interleaved (H, W, channels) in libpng's simplified format `format` (PNG_FORMAT_GRAY,
// _RGB, _RGBA, _GA, or with PNG_FORMAT_FLAG_LINEAR 16-bit samples given as pairs of host bytes).
inline void write_png(const std::string& path, int h, int w, std::uint32_t format,
                      const void* pixels, const void* colormap = nullptr,
                      int colormap_entries = 0) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = format;
  image.colormap_entries = static_cast<png_uint_32>(colormap_entries);
  if (!png_image_write_to_file(&image, path.c_str(), 0, pixels, 0, colormap))
    throw std::runtime_error(std::string("png_image_write_to_file: ") + image.message);
}

inline void write_png(const std::string& path, int h, int w, int channels,
                      const std::vector<std::uint8_t>& hwc) {
  write_png(path, h, w, channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB, hwc.data());
}

inline std::vector<std::uint8_t> jpeg_bytes(int h, int w, int channels,
                                            const std::vector<std::uint8_t>& hwc,
                                            int quality = 95) {
  std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), tjDestroy);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (tjCompress2(handle.get(), hwc.data(), w, 0, h, channels == 1 ? TJPF_GRAY : TJPF_RGB, &out,
                  &size, channels == 1 ? TJSAMP_GRAY : TJSAMP_444, quality, 0) != 0)
    throw std::runtime_error(tjGetErrorStr2(handle.get()));
  std::vector<std::uint8_t> bytes(out, out + size);
  tjFree(out);
  return bytes;
}

inline void write_jpeg(const std::string& path, int h, int w, int channels,
                       const std::vector<std::uint8_t>& hwc) {
  write_bytes(path, jpeg_bytes(h, w, channels, hwc));
}

inline std::vector<std::uint8_t> pnm_bytes(int h, int w, int channels,
                                           const std::vector<std::uint8_t>& hwc, int maxval = 255) {
  const std::string header = std::string(channels == 1 ? "P5" : "P6") + "\n# made by a test\n" +
                             std::to_string(w) + " " + std::to_string(h) + "\n" +
                             std::to_string(maxval) + "\n";
  std::vector<std::uint8_t> bytes(header.begin(), header.end());
  bytes.insert(bytes.end(), hwc.begin(), hwc.end());
  return bytes;
}

// A (H, W, C) image whose every byte differs from its neighbours: value = seed + 7*i.
inline std::vector<std::uint8_t> pattern(int h, int w, int c, int seed = 0) {
  std::vector<std::uint8_t> v(std::size_t(h) * w * c);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(seed + 7 * i);
  return v;
}

// (H, W, C) -> (C, H, W).
inline std::vector<std::uint8_t> planar(const std::vector<std::uint8_t>& hwc, int h, int w, int c) {
  std::vector<std::uint8_t> out(hwc.size());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int ch = 0; ch < c; ++ch)
        out[(std::size_t(ch) * h + y) * w + x] = hwc[(std::size_t(y) * w + x) * c + ch];
  return out;
}

}  // namespace sweep::trainer::test_images
