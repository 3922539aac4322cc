/*
 * image_resize.h — bringing a decoded image to a data set's image_size.
 *
 * Bilinear interpolation, pixel-centre aligned and without antialiasing, as OpenCV's
 * INTER_LINEAR maps coordinates: output pixel x samples the input at (x + 0.5) * in / out - 0.5,
 * clamped to the edge pixels; the two-by-two weighted sum is computed in float and rounded to
 * the nearest integer (OpenCV's 11-bit fixed-point weights may differ from it by 1). Downscaling
 * by more than 2 therefore skips input pixels, as OpenCV's does (Pillow's BILINEAR, which widens
 * its filter when shrinking, averages them).
 *   stretch: straight to H x W (the aspect ratio changes);
 *   crop:    scaled by max(H/h, W/w) (the shorter side fits), then the centre H x W cut out;
 *   pad:     scaled by min(H/h, W/w) (the longer side fits), then centred on a zero H x W.
 * Scaled sizes are rounded to the nearest pixel; odd margins put the extra pixel at the bottom and
 * right. An image already H x W is copied unchanged in every mode.
 */
#pragma once

#include "trainer/data/image_decode.h"

namespace sweep::trainer {

// `image` (C, H, W) brought to height x width by `mode`.
DecodedImage resize_image(const DecodedImage& image, int height, int width, ResizeMode mode);

}  // namespace sweep::trainer
