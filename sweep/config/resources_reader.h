/*
 * resources_reader.h — the `resources` section: execution, gpus, per-trial GPUs, CPU slots,
 * fused arrays.
 */
#pragma once

#include "sweep/config/config.h"
#include "sweep/config/map_reader.h"

namespace sweep::config {

void read_resources(MapReader r, ResourcesSpec& out);

}  // namespace sweep::config
