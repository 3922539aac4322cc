/*
 * train_config.h — everything one training run needs, as plain structs.
 *
 * The trainer knows nothing of YAML or sweeps: sweep/config turns a YAML file into these structs
 * (and validates them with file:line:col messages); C++ users fill them directly. Defaults follow
 * PyTorch / MATLAB trainingOptions / Caffe's solver where those agree. Key names in comments are
 * the YAML keys; a value that is one of a list is an enum of trainer/vocabulary.h, whose tables
 * hold its YAML words. A member's initializer is its key's one default, and its row in
 * trainer/config_keys.cpp its range, aliases and description: adding a key is the member and
 * the row (config_keys.h says what follows from them).
 */
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/layer_table.h"
#include "trainer/optimizer_defaults.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

struct AugmentSpec {
  bool flip = false;     // augment.flip: random horizontal flip
  int translate = 0;     // augment.translate: random shift by up to N pixels (zeros come in)
  int crop_padding = 0;  // augment.crop_padding: pad by N, random crop back (same as shift N)
  bool operator==(const AugmentSpec&) const = default;
};

struct SyntheticSpec {  // data.synthetic: a seeded, learnable data set for tests and benches
  int train_size = 2048, test_size = 512;
  int classes = 10, channels = 1, height = 28, width = 28;
  std::uint64_t seed = 1;
  bool operator==(const SyntheticSpec&) const = default;
};

// dataset: folder (trainer/data/folder_reader.h): `path` holds one subfolder per class.
struct FolderSpec {
  int channels = 0;           // 1 | 3; 0: 3 when any file is colour, else 1
  int height = 0, width = 0;  // image_size [H, W]; 0: as the files (all the same size)
  ResizeMode resize = ResizeMode::stretch;
  OnBadFile on_bad_file = OnBadFile::error;
  std::string cache_dir;  // decoded tensors; empty: $SWEEP_HOME/cache/folders
  bool operator==(const FolderSpec&) const = default;
};

struct DataSpec {
  DatasetKind dataset = DatasetKind::fashion_mnist;
  std::string path = "/usr/share/datasets/fashion-mnist";
  Validation validation = Validation::test;
  double holdout_fraction = 0.1;  // with validation: holdout
  std::int64_t train_limit = 0;   // use only the first N training images (0 = all)
  std::int64_t test_limit = 0;    // use only the first N test images (0 = all)
  ShuffleMode shuffle = ShuffleMode::every_epoch;
  bool normalize = true;  // per-channel mean/std from the training set
  AugmentSpec augment;
  SyntheticSpec synthetic;
  FolderSpec folder;  // dataset: folder
  // dataset: folder or csv: a second set with the same classes (folders) or the same header
  // (csv); with it, validation: test reads it. Empty: validation: test has no set to read.
  std::string validation_path;
  // dataset: numpy and csv (trainer/data/numpy_data.h, csv_reader.h)
  Layout layout = Layout::nchw;              // numpy: a 4-D x's axes (N, C, H, W) or (N, H, W, C)
  Task task = Task::classification;          // y / the label column: class labels or float targets
  std::string label = "label";               // csv: the label column's name
  std::vector<std::string> feature_columns;  // csv: the feature columns; empty: all but label
  bool operator==(const DataSpec&) const = default;
};

// One layer of a `layers:` list: its type and arguments by name, as trainer/layer_table.h lists
// them (conv {filters, kernel, stride, padding, bias}, batchnorm {eps, momentum}, ...).
struct LayerSpec {
  LayerKind type = LayerKind::relu;
  std::map<std::string, double> num;       // numeric arguments (booleans as 0 / 1)
  std::map<std::string, std::string> str;  // text arguments (padding: same | valid; activation)
  std::vector<LayerSpec> layers = {};      // a residual block's own layers
  bool operator==(const LayerSpec&) const = default;
};

struct ModelSpec {
  Preset preset = Preset::lenet;  // Preset::none: `layers` is the model
  int net_width = 16;             // convnet: filters of the first block
  int block_depth = 2;            // convnet: [conv, bn, relu] per block
  int depth = 20;                 // resnet: 6n+2 (CIFAR ResNets) or 18, 34 (trainer/models.h)
  int width = 1;                  // resnet: channels x width (16/32/64 or 64..512)
  std::vector<int> hidden = {256, 128};  // mlp: hidden sizes
  double dropout = 0.0;                  // mlp: dropout after each hidden layer
  std::vector<LayerSpec> layers;         // custom list; a final dense to the classes is appended
                                         // when the list does not end in one with that many units
  bool operator==(const ModelSpec&) const = default;
};

struct ScheduleSpec {
  ScheduleType type = ScheduleType::fixed;
  double drop_factor = 0.1;     // piecewise, multistep (Caffe gamma for step)
  int drop_period = 10;         // piecewise: epochs between drops
  std::vector<int> milestones;  // multistep: epochs at which to drop
  double gamma = 0.0001;        // inv: lr * (1 + gamma * iter)^-power; exp: lr * gamma^epoch
  double power = 0.75;          // inv, poly: lr * (1 - iter / max_iter)^power
  double min_lr = 0.0;          // cosine: floor
  double warmup_epochs = 0.0;   // linear warm-up from warmup_start_factor * lr
  double warmup_start_factor = 0.0;
  bool operator==(const ScheduleSpec&) const = default;
};

struct EarlyStoppingSpec {
  int patience = 0;  // 0 = off; validations without improvement before stopping
  MonitorMetric monitor = MonitorMetric::val_loss;
  double min_delta = 0.0;
  bool operator==(const EarlyStoppingSpec&) const = default;
};

struct CheckpointSpec {
  int every_epochs = 0;  // 0 = only when interrupted
  bool operator==(const CheckpointSpec&) const = default;
};

struct TrainingSpec {
  OptimizerKind optimizer = OptimizerKind::sgdm;
  double learning_rate = optimizer_defaults::learning_rate;
  double momentum = optimizer_defaults::momentum;
  bool nesterov = false;
  double beta1 = optimizer_defaults::beta1, beta2 = optimizer_defaults::beta2;
  double epsilon = optimizer_defaults::epsilon;
  double rms_decay = optimizer_defaults::rms_decay;  // rmsprop alpha
  double weight_decay = optimizer_defaults::weight_decay;
  double gradient_clip = 0.0;  // global L2 norm; 0 = off
  int batch_size = 64;
  int epochs = 10;
  ScheduleSpec schedule;
  int validation_frequency = 0;  // iterations between validations; 0 = once per epoch
  int log_every = 10;            // iterations between train-loss reports (GPU: host reads)
  EarlyStoppingSpec early_stopping;
  OutputNetwork output_network = OutputNetwork::best;
  std::uint64_t seed = 1;
  Precision precision = Precision::fp32;  // tf32 / bf16 on a GPU
  // GPU: the same seed gives the same numbers in any process (DeviceSpec::deterministic).
  bool deterministic = false;
  CheckpointSpec checkpoint;
  // A sweep's trial writes its output network to TRIAL_DIR/model.sweepmodel when it ends
  // (trainer/model_file.h; `sweep export-model`, `sweep predict` read it). false: none is written.
  bool save_model = true;
  bool operator==(const TrainingSpec&) const = default;
};

struct TrainConfig {
  DataSpec data;
  ModelSpec model;
  TrainingSpec training;
  DeviceSpec device;
  // Data parallel: one replica per entry (each a full copy of the model on its device, taking its
  // share of every global batch, gradients summed across replicas after backward). Empty: one
  // replica on `device`. Filled by whoever places the trial (sweep/run from its slots).
  std::vector<DeviceSpec> replicas;
  bool operator==(const TrainConfig&) const = default;

  // The devices the run trains on: one replica per entry of `replicas`, else `device` alone
  // (the replica set applies training.precision to each: the one place a user sets it).
  std::vector<DeviceSpec> devices() const {
    return replicas.empty() ? std::vector<DeviceSpec>{device} : replicas;
  }
};

}  // namespace sweep::trainer
