/*
 * models.h — model presets and custom layer lists, turned into Layer objects.
 *
 * Presets are expanded into the same LayerSpec list a user could write in YAML, so one code path
 * (and one set of error messages) builds every model. Layer order, and so the parameter layout of
 * the Network, is the list order; within a layer, weight then bias (PyTorch layouts):
 *
 *   lenet   (Caffe's LeNet: no ReLU after the convolutions)
 *           conv 20@5x5, maxpool 2, conv 50@5x5, maxpool 2, flatten, dense 500, relu, dense classes
 *   convnet (MATLAB's CIFAR-10 example) for block b = 0, 1, 2:
 *             block_depth x [conv (net_width * 2^b)@3x3 same, no bias; batchnorm; relu]
 *             maxpool 2 stride 2 between blocks (not after the last);
 *           then gap, dense classes
 *   mlp     flatten, per hidden size h: [dense h, relu, dropout p (when p > 0)], dense classes
 *
 * A custom `layers` list is used when it is not empty (the preset is then ignored); a final dense
 * to `classes` is appended unless the list already ends in a dense with that many units.
 */
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/network.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// The layer list of `model`: the custom list, or the preset expanded; final dense included.
// Throws sweep::Error for an unknown preset or bad preset options.
std::vector<LayerSpec> model_layer_specs(const ModelSpec& model, int classes);

// Layer objects for the list (not yet set up). Throws sweep::Error naming the layer's position
// (1-based) and type for an unknown type, a missing or unknown argument, or a bad value.
std::vector<std::unique_ptr<Layer>> build_layers(const ModelSpec& model, int classes);

// Runs every layer's setup in order. Returns the shapes between layers: [0] is the input, [i + 1]
// the output of layer i. Errors carry layer_error_prefix.
std::vector<Shape> setup_layers(const std::vector<std::unique_ptr<Layer>>& layers, Shape input);

// Checks the whole model against an input shape without a backend (for config validation):
// throws the same errors the Network constructor would, returns the parameter count.
std::size_t check_model(const ModelSpec& model, Shape input, int classes);

// "model layer 3 of 8 (conv): " — the prefix every per-layer error carries.
std::string layer_error_prefix(std::size_t index, std::size_t count, std::string_view type);

}  // namespace sweep::trainer
