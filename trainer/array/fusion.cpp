/*
 * fusion.cpp — the shape of an array: a config with its per-member fields reset.
 */
#include "trainer/array/fusion.h"

#include "trainer/data/load_data.h"

namespace sweep::trainer {

TrainConfig array_shape(const TrainConfig& config) {
  TrainConfig shape = config;
  const TrainingSpec defaults;
  TrainingSpec& t = shape.training;
  // What stays: the optimizer kind, the batch size, the epochs and the precision.
  const TrainingSpec kept = t;
  t = defaults;
  t.optimizer = kept.optimizer;
  t.batch_size = kept.batch_size;
  t.epochs = kept.epochs;
  t.precision = kept.precision;
  shape.model.dropout = ModelSpec{}.dropout;
  return shape;
}

std::string fusion_split(const TrainConfig& a, const TrainConfig& b) {
  const TrainConfig x = array_shape(a), y = array_shape(b);
  if (!(x.data == y.data)) return "the data";
  if (!(x.model == y.model)) return "the model";
  if (x.training.optimizer != y.training.optimizer) return "the optimizer";
  if (x.training.batch_size != y.training.batch_size) return "the batch size";
  if (x.training.epochs != y.training.epochs) return "the epochs";
  if (x.training.precision != y.training.precision) return "the precision";
  if (!(x.device == y.device) || !(x.replicas == y.replicas)) return "the device";
  return x == y ? "" : "the config";  // a field added later and not sorted above
}

bool same_loaded_data(const TrainConfig& a, const TrainConfig& b) {
  return a.data == b.data &&
         load_seed(a.data, a.training.seed) == load_seed(b.data, b.training.seed);
}

}  // namespace sweep::trainer
