/*
 * fusion.h — which trials can train together as one fused array (train_array.h): the one place
 * that says so.
 *
 * Members of an array share what fixes the shape and the count of a step: the data, the model
 * (all but its dropout rate), the optimizer kind, the batch size, the epochs, the precision and
 * the device. Everything else may differ per member (learning rate and schedule, momentum,
 * Nesterov, weight decay, Adam's betas and epsilon, RMSprop's decay, gradient clipping, the seed,
 * the dropout rate, early stopping, validation frequency, logging, checkpoints, the output
 * network, whether its model is saved), because each member runs its own loop on its own weights
 * and optimizer state.
 */
#pragma once

#include <string>

#include "trainer/train_config.h"

namespace sweep::trainer {

// The config with every per-member field at its default: members of one array have equal shapes.
TrainConfig array_shape(const TrainConfig& config);

// "" when a and b can share an array; else what splits them, for people ("the batch size").
std::string fusion_split(const TrainConfig& a, const TrainConfig& b);

// Whether a and b train on the same loaded data (load_data(data, seed) gives equal sets): the same
// data spec, and the same seed when the seed splits off a holdout.
bool same_loaded_data(const TrainConfig& a, const TrainConfig& b);

}  // namespace sweep::trainer
