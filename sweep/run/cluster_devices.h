/*
 * cluster_devices.h — the slots of a sweep over several ranks: each rank's devices as plan_devices
 * gives them for that rank's own machine, GPUs split between the ranks that share a node.
 */
#pragma once

#include <vector>

#include "cluster/messages.h"
#include "sweep/config/config.h"
#include "sweep/run/devices.h"

namespace sweep::run {

// `ranks`: every rank's Hello (cluster::Coordinator::ranks()). Ranks on one node (local_size > 1)
// split its selected GPUs in contiguous blocks by local rank. Rank 0's devices are left out when
// !coordinator_runs_trials. Throws config::ConfigError naming the rank when a rank cannot give
// what resources ask for (no GPU left for it, a GPU index it does not have).
DevicePlan plan_cluster_devices(const config::ResourcesSpec& resources,
                                const std::vector<cluster::Hello>& ranks,
                                bool coordinator_runs_trials);

}  // namespace sweep::run
