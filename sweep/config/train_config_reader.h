/*
 * train_config_reader.h — the data, model and training sections of a config → trainer structs.
 *
 * Keys are the field names of trainer/train_config.h, nested as there. Checks happen here, before
 * anything runs: types, ranges, known names, that the data set's files exist and that the model's
 * layers fit its images (the trainer would find out only when a trial starts, possibly hours into
 * a sweep).
 */
#pragma once

#include "sweep/config/config_error.h"
#include "sweep/config/map_reader.h"
#include "sweep/config/yaml_tree.h"
#include "trainer/train_config.h"

namespace sweep::config {

struct TrainReadOptions {
  bool check_data_files = true;    // off for external trainers, which read their own data
  bool check_model_shapes = true;  // the model against the data's images (model_shape_check.h);
                                   // off for external trainers, which build their own
};

// Reads root.data / root.model / root.training into `out`. The caller reports unknown top-level
// keys; everything below these three sections is checked here.
void read_train_config(MapReader& top, trainer::TrainConfig& out, const TrainReadOptions& options);

// The files data set `spec` needs, missing ones named in the returned message ("" when all are
// there; for numpy and csv data, also what their readers refuse in the files). Shared with
// `sweep validate`'s tests.
std::string missing_data_files(const trainer::DataSpec& spec);

// The directory a data set lives in when data.path is not given.
std::string default_data_path(trainer::DatasetKind dataset);

}  // namespace sweep::config
