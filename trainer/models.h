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
 *   resnet  He et al. 2016: conv (c * width)@3x3 same, batchnorm, relu; stages of basic blocks
 *             residual [conv 3x3 (stride), batchnorm, relu, conv 3x3 same, batchnorm] + relu,
 *             every conv without bias, the first block of each stage after the first stride 2
 *             (padding 1), the channels doubling per stage; then gap, dense classes.
 *             depth 6n+2 (CIFAR ResNets, §4.2): c = 16, three stages of n blocks (16, 32, 64);
 *             depth 18 / 34 (ResNet-18/34's CIFAR variant: 3x3 stem, no max-pool): c = 64, four
 *             stages of [2, 2, 2, 2] / [3, 4, 6, 3] blocks (64, 128, 256, 512). The shortcut of a
 *             block that changes the shape is a 1x1 conv + batchnorm (option B; layers/residual.h).
 *
 * A custom `layers` list is used when it is not empty (the preset is then ignored); a final dense
 * to `classes` (1 for regression, classes == 0) is appended unless the list already ends in a
 * dense with that many units.
 */
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "trainer/network.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// preset resnet's depths (6n+2 up to kMaxResNetDepth, 18, 34) and widths, and the sentence that
// lists the depths for a message.
constexpr int kMaxResNetDepth = 1202;  // the deepest of the paper (§4.2)
constexpr int kMaxResNetWidth = 64;
bool is_resnet_depth(int depth);
std::string resnet_depths_text();

// The layer list of `model`: the custom list, or the preset expanded; final dense included.
// Throws sweep::Error for an unknown preset or bad preset options.
std::vector<LayerSpec> model_layer_specs(const ModelSpec& model, int classes);

// Layer objects for the list (not yet set up). Throws LayerError (layers/layer.h) naming the
// layer's position (1-based) and type for an unknown type, a missing or unknown argument, or a
// bad value.
std::vector<std::unique_ptr<Layer>> build_layers(const ModelSpec& model, int classes);

// Runs every layer's setup in order. Returns the shapes between layers: [0] is the input, [i + 1]
// the output of layer i. A layer's errors are LayerErrors, with layer_error_prefix.
std::vector<Shape> setup_layers(const std::vector<std::unique_ptr<Layer>>& layers, Shape input);

// Checks the whole model against an input shape without a backend (for config validation):
// throws the same errors the Network constructor would (a layer's as a LayerError, which says
// which layer), returns the parameter count. Shape arithmetic and a few small allocations, cheap
// enough to run for every trial of a sweep.
std::size_t check_model(const ModelSpec& model, Shape input, int classes);

// "model layer 3 of 8 (conv): " — the prefix every per-layer error carries.
std::string layer_error_prefix(std::size_t index, std::size_t count, std::string_view type);

}  // namespace sweep::trainer
