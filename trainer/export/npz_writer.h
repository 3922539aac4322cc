/*
 * npz_writer.h — named float32 arrays as a NumPy .npz: a zip archive (stored, not deflated) of one
 * .npy file (format version 1.0, little-endian '<f4', C order) per array, as numpy.savez writes
 * it and numpy.load reads it. Written by us: the format is small and fully documented
 * (numpy.lib.format; the zip's local headers, central directory and end record, CRC-32 each).
 *
 *   std::string bytes = npz_bytes({{"0.weight", {20, 1, 5, 5}, values}, ...});
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/export/exported_layers.h"
#include "trainer/model_file.h"

namespace sweep::trainer {

// The archive of `arrays`, each stored as NAME.npy. Throws sweep::Error for a name that is empty,
// repeated, or holds a '/' or a byte below 0x20, or an archive past zip's 4 GiB (no zip64 here).
std::string npz_bytes(const std::vector<const ExportTensor*>& arrays);

// Every tensor of a model file by its layer name (exported_layers.h), plus "input_mean" and
// "input_std" (the per-channel normalisation of raw values * "input_scale", a one-value array).
std::string model_npz_bytes(const ModelFile& m, const std::string& name);

}  // namespace sweep::trainer
