/*
 * image_decode_test.cpp — decode_image and decode_image_file (trainer/data/image_decode.h): exact
 * pixels for PNG and PGM/PPM files the test writes, JPEG against Pillow's decode of committed
 * files, the conversions, the resize modes on tiny known images, and every refusal naming the file.
 *
 * tests/trainer/images/gradient_{rgb,grey}.jpg and their .pillow pixels ((H, W, C) bytes) were made
 * once with Pillow 9.4 (python3-pil, libjpeg-turbo): a 16x16 image of R = 16x, G = 16y,
 * B = 8(x+y) (grey: 8x + 4y) saved with quality=90, then Image.open(f).convert("RGB") / as "L".
 */
#include "trainer/data/image_decode.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/check.h"
#include "image_files.h"
#include "trainer/data/image_resize.h"

namespace sweep::trainer {
namespace {

using namespace test_images;

std::string error_of(const std::vector<std::uint8_t>& bytes, const std::string& name,
                     const ImageDecodeSettings& settings = {}) {
  try {
    decode_image(bytes, name, settings);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ImageDecode, PngGreyAndRgbAreTheFilesPixelsChannelFirst) {
  TempDir dir;
  const auto grey = pattern(3, 5, 1), rgb = pattern(3, 5, 3, 11);
  write_png(dir.file("g.png"), 3, 5, 1, grey);
  write_png(dir.file("c.png"), 3, 5, 3, rgb);
  const DecodedImage g = decode_image_file(dir.file("g.png"), {});
  EXPECT_EQ(g.c, 1);
  EXPECT_EQ(g.h, 3);
  EXPECT_EQ(g.w, 5);
  EXPECT_EQ(g.pixels, grey);
  const DecodedImage c = decode_image_file(dir.file("c.png"), {});
  EXPECT_EQ(c.c, 3);
  EXPECT_EQ(c.pixels, planar(rgb, 3, 5, 3));
}

TEST(ImageDecode, PngAlphaIsDroppedNotComposited) {
  TempDir dir;
  const std::vector<std::uint8_t> rgba = {10, 20, 30, 0, 40, 50, 60, 128};  // 1 x 2
  write_png(dir.file("a.png"), 1, 2, PNG_FORMAT_RGBA, rgba.data());
  const DecodedImage im = decode_image_file(dir.file("a.png"), {});
  EXPECT_EQ(im.c, 3);
  EXPECT_EQ(im.pixels, (std::vector<std::uint8_t>{10, 40, 20, 50, 30, 60}));
}

TEST(ImageDecode, PngPaletteIsExpandedToRgb) {
  TempDir dir;
  const std::vector<std::uint8_t> colormap = {255, 0, 0, 0, 255, 0, 0, 0, 255};
  const std::vector<std::uint8_t> index = {2, 0, 1, 2};  // 2 x 2
  write_png(dir.file("p.png"), 2, 2, PNG_FORMAT_RGB_COLORMAP, index.data(), colormap.data(), 3);
  const DecodedImage im = decode_image_file(dir.file("p.png"), {});
  ASSERT_EQ(im.c, 3);
  EXPECT_EQ(im.pixels, (std::vector<std::uint8_t>{0, 255, 0, 0, 0, 0, 255, 0, 255, 0, 0, 255}));
}

TEST(ImageDecode, Png16BitSamplesKeepTheirHighByte) {
  TempDir dir;
  const std::vector<std::uint16_t> wide = {0x1234, 0xff00, 0x00ff, 0x8080};
  write_png(dir.file("w.png"), 2, 2, PNG_FORMAT_LINEAR_Y, wide.data());
  const DecodedImage im = decode_image_file(dir.file("w.png"), {});
  EXPECT_EQ(im.c, 1);
  EXPECT_EQ(im.pixels, (std::vector<std::uint8_t>{0x12, 0xff, 0x00, 0x80}));
}

TEST(ImageDecode, ColourToGreyIsPillowsLumaAndGreyToColourCopies) {
  const std::vector<std::uint8_t> rgb = {200, 100, 50, 255, 255, 255};  // 1 x 2
  const DecodedImage g = decode_image(pnm_bytes(1, 2, 3, rgb), "x.ppm", {.channels = 1});
  // (200*299 + 100*587 + 50*114) / 1000 = 124; white stays 255.
  EXPECT_EQ(g.pixels, (std::vector<std::uint8_t>{124, 255}));
  const DecodedImage c = decode_image(pnm_bytes(1, 2, 1, {7, 9}), "x.pgm", {.channels = 3});
  EXPECT_EQ(c.c, 3);
  EXPECT_EQ(c.pixels, (std::vector<std::uint8_t>{7, 9, 7, 9, 7, 9}));
}

TEST(ImageDecode, PgmAndPpmAreExactAndASmallMaxvalIsScaled) {
  const auto grey = pattern(4, 3, 1), rgb = pattern(2, 2, 3, 5);
  EXPECT_EQ(decode_image(pnm_bytes(4, 3, 1, grey), "g.pgm", {}).pixels, grey);
  EXPECT_EQ(decode_image(pnm_bytes(2, 2, 3, rgb), "c.ppm", {}).pixels, planar(rgb, 2, 2, 3));
  // maxval 15: round(v * 255 / 15) = 17 v.
  EXPECT_EQ(decode_image(pnm_bytes(1, 3, 1, {0, 1, 15}, 15), "s.pgm", {}).pixels,
            (std::vector<std::uint8_t>{0, 17, 255}));
}

TEST(ImageDecode, JpegMatchesPillowWithinOne) {
  for (const std::string name : {"gradient_rgb.jpg", "gradient_grey.jpg"}) {
    const std::string path = std::string(SWEEP_SOURCE_DIR) + "/tests/trainer/images/" + name;
    const DecodedImage im = decode_image_file(path, {});
    const std::vector<std::uint8_t> pillow = read_bytes(path + ".pillow");
    ASSERT_EQ(im.h, 16);
    ASSERT_EQ(im.w, 16);
    ASSERT_EQ(pillow.size(), im.pixels.size()) << name;
    const std::vector<std::uint8_t> expected = planar(pillow, 16, 16, im.c);
    for (std::size_t i = 0; i < expected.size(); ++i)
      ASSERT_LE(std::abs(int(im.pixels[i]) - int(expected[i])), 1) << name << " byte " << i;
  }
}

TEST(ImageDecode, JpegWrittenByTurboJpegDecodesToItsSizeAndNearItsPixels) {
  const auto rgb = pattern(8, 8, 3);
  std::vector<std::uint8_t> flat(8 * 8 * 3, 90);
  const DecodedImage im = decode_image(jpeg_bytes(8, 8, 3, flat), "flat.jpg", {});
  EXPECT_EQ(im.c, 3);
  EXPECT_EQ(im.h, 8);
  for (std::uint8_t v : im.pixels) EXPECT_NEAR(v, 90, 2);
}

TEST(ImageDecode, ResizeStretchIsPixelCentreBilinear) {
  // 1 x 2 [0, 100] to 1 x 4: samples at x = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped).
  const DecodedImage im = decode_image(pnm_bytes(1, 2, 1, {0, 100}), "s.pgm",
                                       {.height = 1, .width = 4, .resize = ResizeMode::stretch});
  EXPECT_EQ(im.pixels, (std::vector<std::uint8_t>{0, 25, 75, 100}));
}

TEST(ImageDecode, ResizeCropCutsTheCentreAndPadCentresOnZeros) {
  const std::vector<std::uint8_t> wide = {0, 10, 20, 30, 40, 50, 60, 70};  // 2 x 4
  const DecodedImage crop = decode_image(pnm_bytes(2, 4, 1, wide), "w.pgm",
                                         {.height = 2, .width = 2, .resize = ResizeMode::crop});
  EXPECT_EQ(crop.pixels, (std::vector<std::uint8_t>{10, 20, 50, 60}));
  // pad: scaled by 1/2 to 1 x 2 ((0+10+40+50)/4 = 25, (20+30+60+70)/4 = 45), then a zero row.
  const DecodedImage pad = decode_image(pnm_bytes(2, 4, 1, wide), "w.pgm",
                                        {.height = 2, .width = 2, .resize = ResizeMode::pad});
  EXPECT_EQ(pad.pixels, (std::vector<std::uint8_t>{25, 45, 0, 0}));
  // Already the size: unchanged in every mode.
  for (ResizeMode mode : {ResizeMode::stretch, ResizeMode::crop, ResizeMode::pad})
    EXPECT_EQ(
        decode_image(pnm_bytes(2, 4, 1, wide), "w.pgm", {.height = 2, .width = 4, .resize = mode})
            .pixels,
        wide);
}

TEST(ImageDecode, RefusalsNameTheFileAndTheReason) {
  TempDir dir;
  write_png(dir.file("ok.png"), 4, 4, 1, pattern(4, 4, 1));
  std::vector<std::uint8_t> png = read_bytes(dir.file("ok.png"));
  const std::vector<std::uint8_t> cut_png(png.begin(), png.end() - 20);
  EXPECT_NE(error_of(cut_png, "cats/cut.png").find("cats/cut.png: not a valid PNG"),
            std::string::npos)
      << error_of(cut_png, "cats/cut.png");

  const auto jpeg = jpeg_bytes(16, 16, 3, pattern(16, 16, 3));
  // Its entropy-coded data cut short (the end-of-image marker and some data gone): a warning in
  // libjpeg, which would fill grey; refused here.
  const std::vector<std::uint8_t> cut_jpeg(jpeg.begin(), jpeg.end() - 40);
  EXPECT_NE(error_of(cut_jpeg, "cats/cut.jpg").find("cats/cut.jpg: cannot decode the JPEG"),
            std::string::npos)
      << error_of(cut_jpeg, "cats/cut.jpg");

  const std::string text = "hello, not an image";
  EXPECT_NE(error_of({text.begin(), text.end()}, "cats/README.png")
                .find("cats/README.png: not an "
                      "image"),
            std::string::npos);

  auto short_pgm = pnm_bytes(4, 4, 1, pattern(4, 4, 1));
  short_pgm.resize(short_pgm.size() - 3);
  EXPECT_NE(error_of(short_pgm, "a.pgm").find("a.pgm: the file ends early"), std::string::npos);
  EXPECT_NE(error_of(pnm_bytes(1, 1, 1, {0, 0}, 65535), "b.pgm").find("b.pgm: a PGM/PPM maxval"),
            std::string::npos);
  EXPECT_NE(error_of(pnm_bytes(1, 1, 1, {9}, 8), "c.pgm").find("c.pgm: a sample of 9 above"),
            std::string::npos);
}

TEST(ImageDecode, AbsurdHeaderSizesAreRefusedBeforeDecoding) {
  const std::string huge = "P5\n20000 20000\n255\n";
  EXPECT_NE(error_of({huge.begin(), huge.end()}, "big.pgm")
                .find("big.pgm: the header claims an "
                      "image of 20000 x 20000"),
            std::string::npos);
  const std::string many = "P6\n16384 16384\n255\n";  // 2^28 pixels: at the limit, yet truncated
  EXPECT_NE(error_of({many.begin(), many.end()}, "many.ppm").find("ends early"), std::string::npos);
  // A PNG whose IHDR says 100000 pixels wide (its CRC fixed, so libpng reads the header).
  TempDir dir;
  write_png(dir.file("ok.png"), 2, 2, 1, pattern(2, 2, 1));
  std::vector<std::uint8_t> png = read_bytes(dir.file("ok.png"));
  const std::uint32_t width = 100000;
  for (int i = 0; i < 4; ++i) png[16 + i] = static_cast<std::uint8_t>(width >> (24 - 8 * i));
  const std::uint32_t crc = static_cast<std::uint32_t>(crc32(0, png.data() + 12, 17));
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<std::uint8_t>(crc >> (24 - 8 * i));
  EXPECT_NE(error_of(png, "wide.png").find("wide.png: the header claims an image of 100000 x 2"),
            std::string::npos)
      << error_of(png, "wide.png");
}

TEST(ImageDecode, AFileOverTheSizeLimitIsRefusedByItsSizeBeforeReading) {
  TempDir dir;
  const std::string path = dir.file("huge.png");
  write_bytes(path, {0x89, 'P', 'N', 'G'});
  std::filesystem::resize_file(path, kMaxImageFileBytes + 1);  // sparse: no disk used
  try {
    decode_image_file(path, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": an image file of 268435457 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(ImageDecode, HeaderGivesSizeAndChannelsWithoutDecoding) {
  const ImageHeader h = read_image_header(pnm_bytes(3, 5, 3, pattern(3, 5, 3)), "x.ppm");
  EXPECT_EQ(h.c, 3);
  EXPECT_EQ(h.h, 3);
  EXPECT_EQ(h.w, 5);
  const ImageHeader j = read_image_header(jpeg_bytes(8, 4, 1, pattern(8, 4, 1)), "x.jpg");
  EXPECT_EQ(j.c, 1);
  EXPECT_EQ(j.h, 8);
  EXPECT_EQ(j.w, 4);
}

}  // namespace
}  // namespace sweep::trainer
