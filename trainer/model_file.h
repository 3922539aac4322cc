/*
 * model_file.h — a trained network in one file (TRIAL_DIR/model.sweepmodel): everything needed to
 * rebuild it and feed it new inputs without the sweep's config.
 *
 * Layout (little-endian, this machine's float format): magic "SWEEPMDL", a version (uint32), the
 * byte length of the description (uint64), the number of parameters and of state values (uint64
 * each), the description (UTF-8 JSON text), the parameters and the batch-norm state (float32
 * arrays, the Network's flat layouts), and a CRC-32 of everything before it. The description holds
 * the task, the network's outputs, the class names, the input (shape, uint8 pixels or float
 * values, the per-channel normalisation, the image decoding of a folder data set), the resolved
 * layer list (every argument written out: trainer/model_rebuild.h turns it back into a Network by
 * the same code that built it) and whose trial it was.
 *
 * The reader checks the header alone first: the sizes it claims fix the file's whole size, and a
 * file of any other size is refused before the rest is read, so no value read sizes an allocation
 * beyond what the file holds. Files are written atomically (tmp, fsync, rename, fsync of the
 * directory), the temporary never through a symbolic link (common/own_file.h).
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/json.h"

namespace sweep::trainer {

// The file name of a trial's model in its trial directory.
inline constexpr const char* kModelFileName = "model.sweepmodel";
// Bounds the reader holds a header to: the description's length, the floats of each array.
inline constexpr std::uint64_t kMaxModelDescriptionBytes = std::uint64_t(16) << 20;
inline constexpr std::uint64_t kMaxModelFloats = std::uint64_t(1) << 32;  // 16 GiB of float32
inline constexpr int kMaxModelChannels = 4096;  // per-channel statistics of a float input

// How a folder data set's images were decoded (trainer/data/image_decode.h): what a new image
// must go through to look like a training one.
struct ModelImageDecode {
  int channels = 0;                // 1 or 3; 0: as the file
  int height = 0, width = 0;       // 0, 0: as the file
  std::string resize = "stretch";  // a word of ResizeMode
  bool operator==(const ModelImageDecode&) const = default;
};

struct ModelInput {
  int c = 1, h = 1, w = 1;  // per sample (NCHW without N)
  bool is_float = false;    // float values (an .npy of float32, a CSV's columns), else uint8 pixels
  // The network sees (value * scale - mean[ch]) / stdev[ch]: scale 1/255 for pixels, 1 for
  // values (trainer/data/dataset.h, ChannelStats).
  float scale = 1.f / 255.f;
  std::vector<float> mean, stdev;          // one per channel
  std::optional<ModelImageDecode> decode;  // a folder data set's images
  // A CSV data set's feature columns (C of them, in the network's order) and its label column's
  // name: a new CSV's columns are picked by these names. Empty for other data.
  std::vector<std::string> columns;
  std::string label_column;
  bool operator==(const ModelInput&) const = default;
};

struct ModelFile {
  bool regression = false;  // else classification
  int outputs = 0;          // the network's last layer's units (classes, or 1 for regression)
  std::vector<std::string> class_names;  // in label order; empty: classes are numbers
  ModelInput input;
  Json layers = Json::array();  // the resolved layer list (trainer/model_rebuild.h)
  // Whose it is, for people and metadata: "" and -1 outside a sweep.
  std::string sweep;
  std::int64_t trial = -1;
  std::string output_network;  // "best" or "last": which weights the trial kept
  std::vector<float> params, state;
  bool operator==(const ModelFile&) const = default;
};

// Writes atomically. Throws sweep::Error / CallError naming the path.
void write_model_file(const std::string& path, const ModelFile& model);

// Throws sweep::Error naming the file and what is wrong: missing, not a model file, another
// version, truncated or longer than its header says, a bad checksum, a description that is not
// what this build writes (a missing or mistyped key, a shape or statistic out of range).
ModelFile read_model_file(const std::string& path);

// The same from bytes already in memory; `name` is what messages call them.
ModelFile parse_model_file(const std::vector<std::uint8_t>& bytes, const std::string& name);

// The bytes write_model_file writes.
std::vector<std::uint8_t> model_file_bytes(const ModelFile& model);

}  // namespace sweep::trainer
