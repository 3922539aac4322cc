/*
 * layers_reader.h — `model.layers` (a list of one-key maps, Caffe-like) → trainer::LayerSpec.
 *
 * Three spellings per item: a bare name (`- relu`), a name with a scalar shorthand for its main
 * argument (`- maxpool: 2`, `- dense: 500`, `- dropout: 0.5`), or a name with a map of arguments
 * (`- conv: {filters: 20, kernel: 5}`). Booleans (bias) are stored as 0/1 in LayerSpec::num and
 * `padding: same` in LayerSpec::str, as trainer/train_config.h describes. A residual block takes
 * its layers as a map argument or as a list in the shorthand's place:
 *   - residual: {layers: [{conv: {filters: 16, kernel: 3, padding: same}}, batchnorm], activation:
 * relu}
 *   - residual: [{conv: {filters: 16, kernel: 3, padding: same}}, batchnorm]
 */
#pragma once

#include <vector>

#include "sweep/config/map_reader.h"
#include "trainer/train_config.h"

namespace sweep::config {

// Where one layer read into a LayerSpec stands: its key (model.layers.3, or
// model.layers.3.residual.layers.1 inside a block) and its place, and its block's layers', in the
// same order as the LayerSpecs.
struct LayerPlace {
  std::string key;
  Location where;
  std::vector<LayerPlace> layers;
};

// Reads the list at `model.layers` (the node `list`) into `out`, and where each layer stands
// into `places` (one per LayerSpec of `out`, nested alike).
void read_layers(const ConfigTree& tree, Diagnostics& diagnostics, const YAML::Node& list,
                 const std::string& path, std::vector<trainer::LayerSpec>& out,
                 std::vector<LayerPlace>& places);

}  // namespace sweep::config
