/*
 * distributions_reader.h — the sweep's `parameters` block: each parameter's distribution and its
 * own keys, W&B's nested parameter dicts as dotted names.
 */
#pragma once

#include <string>

#include "sweep/config/config.h"
#include "sweep/config/map_reader.h"

namespace sweep::config {

// Reads sweep.parameters into `space`. `method` (grid, random, tpe) decides what a parameter
// without a distribution is; `external_trainer`: any dotted name may be swept.
void read_parameters(MapReader& sweep, SearchSpace& space, bool external_trainer,
                     const std::string& method);

}  // namespace sweep::config
