/*
 * expand.h — a SweepConfig → the list of trials to run, each with its full, checked TrainConfig.
 *
 * Grid order: parameters in the file's order, the last varying fastest (as itertools.product),
 * each point repeated `repeats` times (repeat fastest). Random: point k is drawn from
 * (sweep.seed, k), so the same file gives the same trials. Trial numbers start at 0, as the
 * store's and the scheduler's do (trials/000/ is trial 0).
 */
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/config.h"

namespace sweep::config {

struct TrialPlan {
  int number = 0;                 // 0-based
  nlohmann::ordered_json params;  // swept name → value, in sweep.parameters order
  trainer::TrainConfig config;    // base + this trial's values (+ seed of the repeat)
  std::string resolved_yaml;      // the trial's whole config as YAML
  int repeat = 0;                 // 0-based
  std::uint64_t seed = 0;         // training.seed of this trial
  std::string command;            // external trainer, for people: placeholders filled
                                  // except those known at run time ({trial_dir}, {device}...)
  nlohmann::json placeholders;    // external trainer: {name} → value for every placeholder
                                  // filled above (the scheduler substitutes them per argv
                                  // word, so a value with spaces stays one argument)
};

// Throws ConfigError naming every trial value that makes an invalid config.
std::vector<TrialPlan> expand(const SweepConfig& config);
// The same, adding problems to `diagnostics` instead of throwing (load_config uses it to report
// the base config's and the trials' problems together).
std::vector<TrialPlan> expand(const SweepConfig& config, Diagnostics& diagnostics);

// False when the search space is too broken to enumerate (a grid over a continuous distribution,
// a parameter without values): its problems were reported when it was read.
bool can_expand(const SweepConfig& config);

// "training.learning_rate=0.01 training.batch_size=64"
std::string format_params(const nlohmann::ordered_json& params);
// A json value as it would be written in YAML: 0.01, 64, true, text.
std::string format_value(const nlohmann::ordered_json& value);

}  // namespace sweep::config
