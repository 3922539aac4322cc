/*
 * jpeg_decode.cpp — JPEG through TurboJPEG (libjpeg-turbo's own API, which returns error codes).
 *
 * Decoded with libjpeg's defaults, as Pillow decodes: the accurate integer DCT and smooth
 * ("fancy") chroma upsampling. TJFLAG_STOPONWARNING makes a warning an error, so a truncated or
 * corrupt file is refused rather than filled with grey; TJFLAG_LIMITSCANS refuses a progressive
 * file of more than 500 scans (a decoder-time bomb). Grey files decode to 1 channel, every other
 * colour space but CMYK / YCCK (refused) to RGB.
 */
#include <turbojpeg.h>

#include <memory>

#include "common/check.h"
#include "trainer/data/image_formats.h"

namespace sweep::trainer {

namespace {

struct TjDestroy {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TjDecompressor = std::unique_ptr<void, TjDestroy>;

TjDecompressor make_decompressor(const std::string& name) {
  TjDecompressor handle(tjInitDecompress());
  if (!handle) throw Error(name + ": cannot start the JPEG decoder: " + tjGetErrorStr2(nullptr));
  return handle;
}

struct JpegHeader {
  int width = 0, height = 0, colorspace = 0;
};

JpegHeader read_header(void* handle, std::span<const std::uint8_t> bytes, const std::string& name) {
  JpegHeader h;
  int subsampling = 0;
  if (tjDecompressHeader3(handle, bytes.data(), static_cast<unsigned long>(bytes.size()), &h.width,
                          &h.height, &subsampling, &h.colorspace) != 0)
    throw Error(name + ": not a valid JPEG file: " + tjGetErrorStr2(handle));
  check_image_size(h.width, h.height, name);
  if (h.colorspace == TJCS_CMYK || h.colorspace == TJCS_YCCK)
    throw Error(name + ": a CMYK JPEG; expected a grey or colour (YCbCr / RGB) one");
  return h;
}

}  // namespace

ImageHeader jpeg_header(std::span<const std::uint8_t> bytes, const std::string& name) {
  TjDecompressor handle = make_decompressor(name);
  const JpegHeader h = read_header(handle.get(), bytes, name);
  return {h.colorspace == TJCS_GRAY ? 1 : 3, h.height, h.width};
}

RawImage decode_jpeg(std::span<const std::uint8_t> bytes, const std::string& name) {
  TjDecompressor handle = make_decompressor(name);
  const JpegHeader h = read_header(handle.get(), bytes, name);
  const bool grey = h.colorspace == TJCS_GRAY;
  RawImage out{grey ? 1 : 3, h.height, h.width, {}};
  out.pixels.resize(std::size_t(out.c) * std::size_t(out.h) * std::size_t(out.w));
  if (tjDecompress2(handle.get(), bytes.data(), static_cast<unsigned long>(bytes.size()),
                    out.pixels.data(), out.w, 0, out.h, grey ? TJPF_GRAY : TJPF_RGB,
                    TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0)
    throw Error(name + ": cannot decode the JPEG: " + tjGetErrorStr2(handle.get()));
  return out;
}

}  // namespace sweep::trainer
