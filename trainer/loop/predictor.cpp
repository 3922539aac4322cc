/*
 * predictor.cpp — batches through BatchSource (ShuffleMode::never, no augmentation) and the
 * network's inference forward, as Evaluator::run_batch does them.
 */
#include "trainer/loop/predictor.h"

#include <algorithm>
#include <cmath>

#include "common/check.h"
#include "trainer/data/batch_source.h"
#include "trainer/model_rebuild.h"

namespace sweep::trainer {

ChannelStats model_stats(const ModelFile& m) {
  ChannelStats s;
  s.scale = m.input.scale;
  s.mean = m.input.mean;
  s.stdev = m.input.stdev;
  return s;
}

std::vector<float> softmax_rows(const std::vector<float>& logits, int cols) {
  std::vector<float> out(logits.size());
  for (std::size_t r = 0; r + std::size_t(cols) <= logits.size(); r += std::size_t(cols)) {
    const float top = *std::max_element(logits.begin() + std::ptrdiff_t(r),
                                        logits.begin() + std::ptrdiff_t(r + std::size_t(cols)));
    double sum = 0;
    for (int c = 0; c < cols; ++c) sum += std::exp(double(logits[r + std::size_t(c)]) - top);
    for (int c = 0; c < cols; ++c)
      out[r + std::size_t(c)] =
          static_cast<float>(std::exp(double(logits[r + std::size_t(c)]) - top) / sum);
  }
  return out;
}

Predictor::Predictor(Backend& backend, const ModelFile& model, const std::string& name, int batch)
    : backend_(backend),
      model_(model),
      name_(name),
      batch_(batch),
      net_(rebuild_network(backend, model, batch, name)) {}

Predictor::~Predictor() = default;

std::vector<float> Predictor::logits(const Dataset& in) {
  const ModelInput& want = model_.input;
  if (in.c != want.c || in.h != want.h || in.w != want.w)
    throw Error(in.source + ": inputs of shape " + shape_text(Shape{in.c, in.h, in.w}) +
                ", the model takes " + shape_text(Shape{want.c, want.h, want.w}));
  if (in.is_float() != want.is_float)
    throw Error(in.source + ": " + (in.is_float() ? "float values" : "uint8 pixels") +
                ", the model was trained on " + (want.is_float ? "float values" : "uint8 pixels"));
  const int outputs = model_.outputs;
  // The rows are the values' (inputs carry no labels, or labels of their own that are not read).
  const std::size_t values = in.is_float() ? in.features.size() : in.images.size();
  const std::size_t per = std::size_t(in.image_bytes());
  if (values % per != 0)
    throw Error(in.source + ": " + std::to_string(values) + " values are not whole samples of " +
                std::to_string(per));
  const std::size_t rows = values / per;
  std::vector<float> result(rows * std::size_t(outputs));
  if (rows == 0) return result;
  // The labels (targets) are the gather's other half; predictions read none of them.
  Dataset data = in;
  data.classes = model_.regression ? 0 : outputs;
  data.labels.clear();
  data.targets.clear();
  if (model_.regression)
    data.targets.assign(rows, 0.f);
  else
    data.labels.assign(rows, 0);
  BatchSource source(backend_, data, model_stats(model_), batch_, ShuffleMode::never, 0,
                     AugmentSpec{}, false);
  DeviceBuffer x(
      backend_, std::size_t(batch_) * std::size_t(Shape{in.c, in.h, in.w}.numel()) * sizeof(float));
  DeviceBuffer y(backend_, std::size_t(batch_) * sizeof(std::int32_t));
  for (std::int64_t b = 0; b < source.batches_per_epoch(); ++b) {
    const int n = source.gather(b, 0, false, x.f(), y.as<void>());
    const float* out = net_->forward(x.f(), n, false);
    backend_.copy_to_host(
        result.data() + std::size_t(b) * std::size_t(batch_) * std::size_t(outputs), out,
        std::size_t(n) * std::size_t(outputs) * sizeof(float));
  }
  return result;
}

std::vector<float> Predictor::outputs(const Dataset& in) {
  std::vector<float> l = logits(in);
  return model_.regression ? l : softmax_rows(l, model_.outputs);
}

}  // namespace sweep::trainer
