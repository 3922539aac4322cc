/*
 * train_config.h — everything one training run needs, as plain structs.
 *
 * The trainer knows nothing of YAML or sweeps: sweep/config turns a YAML file into these structs
 * (and validates them with file:line:col messages); C++ users fill them directly. Defaults follow
 * PyTorch / MATLAB trainingOptions / Caffe's solver where those agree. Key names in comments are
 * the YAML keys.
 */
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/backend.h"

namespace sweep::trainer {

struct AugmentSpec {
  bool flip = false;     // augment.flip: random horizontal flip
  int translate = 0;     // augment.translate: random shift by up to N pixels (zeros come in)
  int crop_padding = 0;  // augment.crop_padding: pad by N, random crop back (same as shift N)
};

struct SyntheticSpec {  // data.synthetic: a seeded, learnable data set for tests and benches
  int train_size = 2048, test_size = 512;
  int classes = 10, channels = 1, height = 28, width = 28;
  std::uint64_t seed = 1;
};

struct DataSpec {
  std::string dataset = "fashion-mnist";  // fashion-mnist | mnist | cifar10 | synthetic
  std::string path = "/usr/share/datasets/fashion-mnist";
  std::string validation = "test";      // test | holdout | none
  double holdout_fraction = 0.1;        // with validation: holdout
  std::int64_t train_limit = 0;         // use only the first N training images (0 = all)
  std::int64_t test_limit = 0;          // use only the first N test images (0 = all)
  std::string shuffle = "every-epoch";  // every-epoch | once | never
  bool normalize = true;                // per-channel mean/std from the training set
  AugmentSpec augment;
  SyntheticSpec synthetic;
};

// One layer of a `layers:` list. `type` is conv | batchnorm | relu | maxpool | avgpool | gap |
// dense | dropout | flatten. Arguments by name: conv {filters, kernel, stride, padding ("same" or a
// number), bias}, maxpool/avgpool {size, stride, padding}, dense {units, bias}, dropout {rate}.
struct LayerSpec {
  std::string type;
  std::map<std::string, double> num;       // numeric arguments
  std::map<std::string, std::string> str;  // text arguments (padding: same)
};

struct ModelSpec {
  std::string preset = "lenet";          // lenet | convnet | mlp | "" (then `layers` is used)
  int net_width = 16;                    // convnet: filters of the first block
  int block_depth = 2;                   // convnet: [conv, bn, relu] per block
  std::vector<int> hidden = {256, 128};  // mlp: hidden sizes
  double dropout = 0.0;                  // mlp: dropout after each hidden layer
  std::vector<LayerSpec> layers;         // custom list; a final dense to the classes is appended
                                         // when the list does not end in one with that many units
};

struct ScheduleSpec {
  std::string type = "fixed";   // fixed | piecewise | multistep | inv | exp | poly | cosine
  double drop_factor = 0.1;     // piecewise, multistep (Caffe gamma for step)
  int drop_period = 10;         // piecewise: epochs between drops
  std::vector<int> milestones;  // multistep: epochs at which to drop
  double gamma = 0.0001;        // inv: lr * (1 + gamma * iter)^-power; exp: lr * gamma^epoch
  double power = 0.75;          // inv, poly: lr * (1 - iter / max_iter)^power
  double min_lr = 0.0;          // cosine: floor
  double warmup_epochs = 0.0;   // linear warm-up from warmup_start_factor * lr
  double warmup_start_factor = 0.0;
};

struct EarlyStoppingSpec {
  int patience = 0;                  // 0 = off; validations without improvement before stopping
  std::string monitor = "val_loss";  // val_loss | val_accuracy | train_loss
  double min_delta = 0.0;
};

struct CheckpointSpec {
  int every_epochs = 0;  // 0 = only when interrupted
};

struct TrainingSpec {
  std::string optimizer = "sgdm";  // sgdm | adam | rmsprop
  double learning_rate = 0.01;
  double momentum = 0.9;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999;
  double epsilon = 1e-8;
  double rms_decay = 0.99;  // rmsprop alpha
  double weight_decay = 0.0;
  double gradient_clip = 0.0;  // global L2 norm; 0 = off
  int batch_size = 64;
  int epochs = 10;
  ScheduleSpec schedule;
  int validation_frequency = 0;  // iterations between validations; 0 = once per epoch
  int log_every = 10;            // iterations between train-loss reports (GPU: host reads)
  EarlyStoppingSpec early_stopping;
  std::string output_network = "best";  // best | last
  std::uint64_t seed = 1;
  std::string precision = "fp32";  // fp32 | tf32 | bf16 (GPU)
  CheckpointSpec checkpoint;
};

struct TrainConfig {
  DataSpec data;
  ModelSpec model;
  TrainingSpec training;
  DeviceSpec device;
};

}  // namespace sweep::trainer
