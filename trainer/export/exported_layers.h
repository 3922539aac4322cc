/*
 * exported_layers.h — a model file's layers as the exporters see them: each layer with its shapes,
 * its settings resolved (a convolution's padding as a number) and its tensors cut out of the flat
 * parameter and state arrays, named as a PyTorch nn.Sequential of the same layers names them in
 * its state_dict: "3.weight", "3.bias" (a convolution or dense layer), "1.weight", "1.bias",
 * "1.running_mean", "1.running_var" (a batch norm), a residual block's own layers under
 * "5.body.N." and its projection shortcut under "5.shortcut.0." (the 1x1 convolution) and
 * "5.shortcut.1." (its batch norm). Layers are numbered from 0 in the list; dropout and flatten
 * keep their numbers and hold no tensors.
 *
 * Layouts are the engine's, which are PyTorch's: a convolution's weight (K, C, R, S), a dense
 * layer's (units, in) over its input flattened in C, H, W order.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model_file.h"
#include "trainer/network.h"

namespace sweep::trainer {

struct ExportTensor {
  std::string name;                // "3.weight"
  std::vector<std::int64_t> dims;  // (K, C, R, S), (units, in), (C)
  std::vector<float> values;
};

struct ExportLayer {
  LayerKind kind = LayerKind::relu;
  std::string name;  // "3", "5.body.0", "5.shortcut.0"
  Shape in, out;
  int kernel = 1, stride = 1, pad = 0;  // conv; pooling (kernel = the window)
  float eps = 1e-5f;                    // batchnorm
  bool relu_after_sum = false;          // residual: ReLU after the sum
  std::vector<ExportTensor> tensors;    // in the engine's order (weight, bias; mean, var)
  std::vector<ExportLayer> body;        // residual: F's layers
  std::vector<ExportLayer> shortcut;    // residual: empty (identity) or [1x1 conv, batchnorm]
};

// The layers of `m` (checked with check_model_network first). Throws sweep::Error naming `name`.
std::vector<ExportLayer> exported_layers(const ModelFile& m, const std::string& name);

// Every tensor of the list, depth first, in the order above.
std::vector<const ExportTensor*> all_tensors(const std::vector<ExportLayer>& layers);
// The pointers point into `layers`, which must outlive them: a temporary list is refused.
std::vector<const ExportTensor*> all_tensors(std::vector<ExportLayer>&& layers) = delete;

}  // namespace sweep::trainer
