/*
 * early_terminate_reader.h — the sweep's `early_terminate` block: median, ASHA or hyperband and
 * their keys, as the scheduler's stopping policy takes them.
 */
#pragma once

#include <optional>

#include "sweep/config/config.h"
#include "sweep/config/map_reader.h"

namespace sweep::config {

// Sets `out` when the block is present (its policy in the scheduler's keys).
void read_early_terminate(MapReader r, std::optional<EarlyTerminateSpec>& out);

}  // namespace sweep::config
