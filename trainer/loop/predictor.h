/*
 * predictor.h — a model file's network run on new inputs, as the validation pass runs it.
 *
 * The inputs are a Dataset of raw values (uint8 pixels or float features, in the model's input
 * shape); they go through the same path as an Evaluator's (evaluator.h): uploaded once, gathered
 * in batches by the backend's gather_batch with the model's normalisation factors, then the
 * network's inference forward (batch norm with running statistics, dropout off). So a validation
 * image gives, bit for bit on the same backend, the logits the validation pass scored.
 *
 *   Predictor p(*backend, model, "runs/q/trials/003/model.sweepmodel");
 *   std::vector<float> probs = p.outputs(inputs);   // (N, outputs), row-major
 */
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/data/dataset.h"
#include "trainer/model_file.h"
#include "trainer/network.h"

namespace sweep::trainer {

class Predictor {
 public:
  // Rebuilds the network on `backend`. Throws sweep::Error naming `name` for a model that cannot be
  // built.
  Predictor(Backend& backend, const ModelFile& model, const std::string& name, int batch = 256);
  ~Predictor();

  // The network's raw outputs (N, outputs): logits, or the value for regression. Throws
  // sweep::Error naming `inputs.source` when their shape or kind is not the model's input.
  std::vector<float> logits(const Dataset& inputs);
  // Class probabilities (softmax of the logits, per row) for classification; the values for
  // regression.
  std::vector<float> outputs(const Dataset& inputs);

  const ModelFile& model() const { return model_; }

 private:
  Backend& backend_;
  ModelFile model_;  // its own copy: a caller's may be a temporary
  std::string name_;
  int batch_;
  std::unique_ptr<Network> net_;
};

// The model's normalisation as the data pipeline takes it.
ChannelStats model_stats(const ModelFile& m);

// Softmax of each row of `logits` (rows x cols), in double then rounded: what `sweep predict`
// prints and the ONNX export's Softmax computes.
std::vector<float> softmax_rows(const std::vector<float>& logits, int cols);

}  // namespace sweep::trainer
