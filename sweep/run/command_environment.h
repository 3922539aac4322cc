/*
 * command_environment.h — what the run glue adds to an external-command trial's environment
 * beyond what the command trial sets itself (scheduler/trial_environment.h names them all):
 *
 *   SWEEP_PARAMS       the trial's swept parameters as one JSON object, named as in
 *                      sweep.parameters ({"training.learning_rate": 0.01, "width": 32}), with
 *                      their types (numbers, strings, booleans, lists)
 *   SWEEP_SWEEP_NAME   the sweep's name (runs/NAME/)
 *   SWEEP_TRIAL_SEED   the trial's seed, as {seed} gives it
 *   PYTHONPATH         the directory of the Python helper sweep_trial.py in front
 *
 * The first three are facts of the trial that travel with it to another rank; PYTHONPATH is
 * resolved by each rank for its own installation.
 */
#pragma once

#include <map>
#include <string>

#include "sweep/config/config.h"
#include "sweep/config/expand.h"

namespace sweep::run {

using Environment = std::map<std::string, std::string>;

// SWEEP_PARAMS, SWEEP_SWEEP_NAME, SWEEP_SWEEP_DIR (`run_dir`, absolute) and SWEEP_TRIAL_SEED,
// ready for CommandSpec::env (braces escaped: the values are not templates).
Environment command_trial_facts(const config::SweepConfig& config, const config::TrialPoint& point,
                                const std::filesystem::path& run_dir);

// "SWEEP_SWEEP_DIR=<run_dir, absolute>": what every process of the sweep's external trials holds
// in its environment.
std::string sweep_dir_entry(const std::filesystem::path& run_dir);

// `env` with PYTHONPATH set to python_helper_dir() in front of the inherited PYTHONPATH (left as
// it is when no helper directory is found).
Environment with_python_helper(Environment env);

// Where sweep_trial.py is: ../share/sweep/python beside an installed binary (found through
// /proc/self/exe, so an installation may be moved), else the source tree's python/ of a build
// tree; "" when neither holds it (the .deb also puts it on the system Python's path).
std::string python_helper_dir();

}  // namespace sweep::run
