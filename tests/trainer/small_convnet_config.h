/*
 * small_convnet_config.h — the small CPU run the training-loop tests share: small and fast, with
 * a partial last batch and every kind of state a checkpoint carries (conv, batch norm's running
 * statistics, dropout's counter-based masks, dense).
 */
#pragma once

#include "tests/trainer/layer_spec_util.h"
#include "trainer/train_config.h"

namespace sweep::trainer::test {

// 300 training and 100 test synthetic 1x10x10 images (data seed 3); conv 4@3x3, [batchnorm],
// relu, maxpool 2, flatten, dense 16, relu, [dropout 0.25], dense 10; batch 32 (300 = 9 * 32 +
// 12: a partial last batch), learning rate 0.05, a log line every 4 steps, seed 11, one CPU thread.
inline TrainConfig small_convnet_config(bool batchnorm, bool dropout, int epochs) {
  TrainConfig c;
  c.data.dataset = DatasetKind::synthetic;
  c.data.synthetic.train_size = 300;
  c.data.synthetic.test_size = 100;
  c.data.synthetic.height = 10;
  c.data.synthetic.width = 10;
  c.data.synthetic.seed = 3;
  c.model.preset = Preset::none;
  c.model.layers = {layer("conv", {{"filters", 4}, {"kernel", 3}})};
  if (batchnorm) c.model.layers.push_back(layer("batchnorm"));
  c.model.layers.push_back(layer("relu"));
  c.model.layers.push_back(layer("maxpool", {{"size", 2}, {"stride", 2}}));
  c.model.layers.push_back(layer("flatten"));
  c.model.layers.push_back(layer("dense", {{"units", 16}}));
  c.model.layers.push_back(layer("relu"));
  if (dropout) c.model.layers.push_back(layer("dropout", {{"rate", 0.25}}));
  c.model.layers.push_back(layer("dense", {{"units", 10}}));
  c.training.batch_size = 32;
  c.training.epochs = epochs;
  c.training.learning_rate = 0.05;
  c.training.log_every = 4;
  c.training.seed = 11;
  c.device = DeviceSpec{DeviceKind::cpu, 0, 1};
  return c;
}

}  // namespace sweep::trainer::test
