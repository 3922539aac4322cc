/*
 * sweep_cross_checks.h — the checks of the sweep section that need the other sections: the
 * metric, method and early termination against training; W&B's flat parameter names mapped to the
 * config keys the readers asked for; two parameters that set one key.
 */
#pragma once

#include <string>
#include <vector>

#include "sweep/config/config.h"
#include "sweep/config/map_reader.h"

namespace sweep::config {

// W&B's flat parameter names for the built-in trainer: `learning_rate` becomes the one config key
// of that name (training.learning_rate), found among `asked_keys` (every key the data, model and
// training readers asked for: ConfigTree::asked_keys) and the readers' aliases; of several, the
// shallowest if it is alone. `parameters_path` names the block in messages.
void map_flat_parameter_names(SweepSpec& sweep, const std::vector<std::string>& asked_keys,
                              const std::string& parameters_path, Diagnostics& diagnostics);
// Two swept parameters that set the same config key (learning_rate and training.learning_rate,
// an alias and its key, a section and a key inside it) would each overwrite the other in every
// trial: one is refused, naming the other's line.
void check_parameters_set_distinct_keys(const SweepSpec& sweep, Diagnostics& diagnostics);

// Metric, method and early-termination rules that need the training section too.
void check_sweep_against_training(MapReader& sweep_reader, const SweepSpec& sweep,
                                  const trainer::TrainConfig& base, bool external_trainer);

}  // namespace sweep::config
