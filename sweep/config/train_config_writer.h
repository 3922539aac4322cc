/*
 * train_config_writer.h — trainer::TrainConfig → YAML, every field written (defaults included).
 *
 * A trial's resolved config is this text: it reads back through load_config to the same struct,
 * so a trial can be rerun from its stored YAML alone, and a reader sees every value in effect,
 * not just the ones the file changed.
 */
#pragma once

#include <yaml-cpp/yaml.h>

#include "trainer/train_config.h"

namespace sweep::config {

// A map with keys data, model, training (the device is chosen at run time and not written).
YAML::Node to_yaml(const trainer::TrainConfig& config);

}  // namespace sweep::config
