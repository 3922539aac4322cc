/*
 * wandb_layout.h — a W&B sweep file read as it is.
 *
 * W&B writes the sweep's keys at the top level (method, metric, parameters, early_terminate,
 * run_cap) and the trainer as `program` plus a `command` list with macros (${env},
 * ${interpreter}, ${program}, ${args}, ${args_no_hyphens}, ${args_json}). A file with any of
 * those top-level keys and no `sweep:` section is that layout: its sweep keys move, as nodes
 * (so every message still points at the user's line), under a `sweep` map, and program +
 * command become the external trainer's command template with W&B's macro meanings:
 *
 *   ${env}             /usr/bin/env
 *   ${interpreter}     python3 (W&B's `python`; Debian has python3)
 *   ${program}         the program key
 *   ${args}            --NAME={NAME} for every parameter (W&B's --NAME=VALUE)
 *   ${args_no_hyphens} NAME={NAME}
 *   ${args_json}       the trial's parameters as one JSON argument
 *
 * The default command is W&B's: ${env} ${interpreter} ${program} ${args}. Keys only W&B's
 * service uses (project, entity, description, controller, apiVersion, kind) are accepted and
 * noted; the ones that would change what runs (metrics, scheduler, job, image_uri,
 * ${args_json_file}) are errors that say so.
 */
#pragma once

#include "sweep/config/config_error.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config {

// Rewrites tree.root in place when it is in W&B's layout (see above) and returns true. Problems (a
// W&B key that sweep cannot honour, a `sweep:` section beside top-level sweep keys, an unknown
// macro) are errors in `diagnostics`; keys accepted but unused are its warnings.
bool adopt_wandb_layout(ConfigTree& tree, Diagnostics& diagnostics);

}  // namespace sweep::config
