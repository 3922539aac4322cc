/*
 * lenet_config.h — the LeNet the tests and benchmarks train, written once: the `lenet` preset
 * (trainer/models.h) with Caffe's lenet_solver recipe, SGD with momentum 0.9, learning rate 0.01,
 * weight decay 5e-4. bench/peers/torch_lenet.py is the same network and recipe in PyTorch.
 *
 * The data set, device, seed and anything a caller varies (a member's learning rate, a
 * precision) are set by the caller on top, so each file shows only where it differs.
 */
#pragma once

#include <string>

#include "trainer/train_config.h"

namespace sweep::trainer::test {

inline ModelSpec lenet_model() {
  ModelSpec m;
  m.preset = Preset::lenet;
  return m;
}

// The optimizer's settings of the recipe (batch size and epochs left at their defaults).
inline TrainingSpec lenet_training() {
  TrainingSpec t;
  t.optimizer = OptimizerKind::sgdm;
  t.learning_rate = 0.01;
  t.momentum = 0.9;
  t.weight_decay = 5e-4;
  return t;
}

// The preset and the recipe at `batch_size` for `epochs`; the data set and device are the
// TrainConfig's defaults until the caller sets them.
inline TrainConfig lenet_config(int batch_size, int epochs) {
  TrainConfig c;
  c.model = lenet_model();
  c.training = lenet_training();
  c.training.batch_size = batch_size;
  c.training.epochs = epochs;
  return c;
}

// lenet_config on the Fashion-MNIST files in `dir`.
inline TrainConfig fashion_mnist_lenet(const std::string& dir, int batch_size, int epochs) {
  TrainConfig c = lenet_config(batch_size, epochs);
  c.data.dataset = DatasetKind::fashion_mnist;
  c.data.path = dir;
  return c;
}

}  // namespace sweep::trainer::test
