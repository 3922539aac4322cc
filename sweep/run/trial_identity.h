/*
 * trial_identity.h — whose checkpoint a trial writes and accepts (trainer::CheckpointIdentity):
 * its sweep's name, its number, and a hash of its resolved config.
 *
 * The hash covers what the trial trains (the data set and how it is read, the model, every
 * training option, the trial's seed) and nothing a resume may change: the data's path
 * (`sweep resume --set data.path=DIR` finds the same data elsewhere) and the devices (chosen per
 * run, never in the resolved config). So a trial accepts its own checkpoint wherever its sweep was
 * moved, and refuses one written by another trial, or by a trial of the same number in another
 * sweep of the same name whose config differs.
 */
#pragma once

#include <cstdint>
#include <string>

#include "trainer/checkpoint.h"
#include "trainer/train_config.h"

namespace sweep::run {

// FNV-1a (64 bits) of the config as YAML (config::to_yaml), its data path left out.
std::uint64_t trial_config_hash(const trainer::TrainConfig& config);

trainer::CheckpointIdentity trial_identity(const std::string& sweep_name, std::int64_t number,
                                           const trainer::TrainConfig& config);

}  // namespace sweep::run
