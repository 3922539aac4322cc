/*
 * external_trainer_reader.h — the `trainer` section: an external command as each trial's
 * trainer.
 */
#pragma once

#include <optional>

#include "sweep/config/config.h"
#include "sweep/config/map_reader.h"

namespace sweep::config {

void read_external_trainer(MapReader r, std::optional<ExternalTrainerSpec>& out);

}  // namespace sweep::config
