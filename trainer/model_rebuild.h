/*
 * model_rebuild.h — between a trained Network and its model file (trainer/model_file.h).
 *
 * The model file holds the layer list as the engine builds it (model_layer_specs: a preset
 * expanded, the final dense appended) with every argument written out, defaults included, so that
 * a reader (the ONNX and npz writers, a person) needs no defaults of its own, and the Network is
 * rebuilt by the same code that built it: ModelSpec{preset none, layers = that list}.
 *
 *   ModelFile m = model_file_of(config, data, net);            // at a trial's end
 *   write_model_file(dir / kModelFileName, m);
 *   ModelFile back = read_model_file(path);
 *   check_model_network(back, path);                           // layers vs arrays, or Error
 *   std::unique_ptr<Network> net = rebuild_network(backend, back, 256);
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trainer/data/load_data.h"
#include "trainer/model_file.h"
#include "trainer/network.h"

namespace sweep::trainer {

// The layer list with every argument of trainer/layer_table.h written out (defaults filled in).
std::vector<LayerSpec> resolved_layer_specs(const std::vector<LayerSpec>& specs);
Json layer_specs_json(const std::vector<LayerSpec>& specs);
// Throws sweep::Error naming `name` and the layer for an unknown type, argument or value.
std::vector<LayerSpec> layer_specs_from_json(const Json& layers, const std::string& name);

// The model file of `net` as trained on `data` under `cfg` (its weights as they are now).
ModelFile model_file_of(const TrainConfig& cfg, const LoadedData& data, Network& net);

// What Network takes as its classes: the outputs, or 0 for a regression network (one output).
int model_classes(const ModelFile& m);
// The network's input shape and ModelSpec as the file describes them.
Shape model_input_shape(const ModelFile& m);
ModelSpec model_spec_of(const ModelFile& m, const std::string& name);

// Throws sweep::Error naming `name` when the layers cannot be built for the input, do not end in
// `outputs` units, or need other numbers of parameters or state values than the file holds.
void check_model_network(const ModelFile& m, const std::string& name);

// The network of `m` on `backend` for batches of up to max_batch, with the file's weights.
std::unique_ptr<Network> rebuild_network(Backend& backend, const ModelFile& m, int max_batch,
                                         const std::string& name);

}  // namespace sweep::trainer
