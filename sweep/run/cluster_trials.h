/*
 * cluster_trials.h — sweep's own trials as they travel to another rank: the built-in trainer
 * (the sweep's config travels, the host resolves the trial from it) and an external command
 * (its template; the program runs on the host exactly as it would here), and the host's whole
 * life: serve_host.
 */
#pragma once

#include <map>
#include <memory>
#include <string>

#include "cluster/coordinator.h"
#include "cluster/host.h"
#include "store/records.h"
#include "sweep/config/config.h"

namespace sweep::run {

inline constexpr const char* kTrainerTrialKind = "sweep.trainer";
inline constexpr const char* kCommandTrialKind = "sweep.command";

// What a built-in trainer trial needs on another rank: the sweep's effective YAML (shared by all
// its trials: the host parses it once), where it was read from, the trial's row (its number and
// values: a tpe trial's values are in no config), and how it runs.
cluster::RemoteTrial remote_trainer_trial(const std::shared_ptr<const std::string>& sweep_yaml,
                                          const std::string& config_path, const TrialRow& row,
                                          int cpu_threads, bool resume, bool retried,
                                          const std::string& trial_dir);
// An external command's trial: its template and `facts` (command_trial_facts: SWEEP_PARAMS...);
// the host adds its own PYTHONPATH.
cluster::RemoteTrial remote_command_trial(const config::SweepConfig& config,
                                          const std::string& trial_dir,
                                          const std::map<std::string, std::string>& facts);

// The factories for both kinds.
cluster::TrialFactories sweep_trial_factories();

// A rank > 0 of `sweep` under mpirun / srun: serves trials until rank 0 says Shutdown.
int serve_host(cluster::Transport& transport, const cluster::ClusterOptions& options);

}  // namespace sweep::run
