/*
 * model_shape_check.h — the model checked against the data before anything runs.
 *
 * Every layer's shape is worked out for the data set's images (trainer::check_model: the
 * trainer's own setup, no backend, no allocation of weights; microseconds), so a kernel larger
 * than its input, a conv with stride 2 and padding same, a residual block whose shapes do not add
 * up or a pooling layer left with nothing to pool is one line of `sweep validate`, not a trial
 * that fails when it starts. The message is the trainer's, with the images' shape after it.
 *
 * Where it is reported: a layer of model.layers at its entry (a block's layer at its own entry in
 * the block), a preset at model.preset; but when a value given outside the file's text stands
 * behind it (a trial's swept value, a --set), at that value, as every trial problem is: first one
 * inside the failing layer's entry, else another key of the model, else the data's image size
 * (data.dataset, data.synthetic.channels / height / width). A trial whose problem the base config
 * already has is reported where the base's is, so it is one line.
 */
#pragma once

#include <vector>

#include "sweep/config/config_error.h"
#include "sweep/config/layers_reader.h"
#include "sweep/config/yaml_tree.h"
#include "trainer/train_config.h"

namespace sweep::config {

// Where the keys that make the model stand, as read_model found them.
struct ModelPlaces {
  Location preset;                  // model.preset (the model section, or the file, when absent)
  Location layers;                  // model.layers
  std::vector<LayerPlace> entries;  // one per layer of model.layers
};

// Adds a line to `diagnostics` when `config.model` cannot take `config.data`'s images. Call only
// when the data and model sections read without problems (a bad value keeps its default, and the
// default would be checked instead).
void check_model_shapes(const ConfigTree& tree, const trainer::TrainConfig& config,
                        const ModelPlaces& places, Diagnostics& diagnostics);

}  // namespace sweep::config
