/*
 * sweep_spec_reader.h — the sweep section of a config, and through the headers it includes the
 * resources and trainer sections' readers and the cross-section checks: what load_config() calls.
 *
 * Internal to sweep/: load_config() calls these after --set overrides are applied. Parameter keys
 * are checked later, when expand writes each trial's values into the tree and re-reads it, so an
 * unknown dotted key gets the same "did you mean" as an unknown key in the file.
 */
#pragma once

#include "sweep/config/config.h"
#include "sweep/config/external_trainer_reader.h"
#include "sweep/config/map_reader.h"
#include "sweep/config/resources_reader.h"
#include "sweep/config/sweep_cross_checks.h"

namespace sweep::config {

// The sweep section: method, metric, max_trials / run_cap, seed, repeats, with its parameters
// (distributions_reader.h) and early_terminate (early_terminate_reader.h).
void read_sweep_spec(MapReader r, SweepSpec& out, bool external_trainer);

}  // namespace sweep::config
