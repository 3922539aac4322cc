/*
 * cluster_devices.cpp — plan_devices per rank, then one executor's device list. The GPU count a
 * multi-GPU trial may ask for is the smallest any GPU rank has: a trial never spans ranks.
 */
#include "sweep/run/cluster_devices.h"

#include <algorithm>
#include <map>

#include "common/format.h"
#include "sweep/config/config_error.h"

namespace sweep::run {

DevicePlan plan_cluster_devices(const config::ResourcesSpec& resources,
                                const std::vector<cluster::Hello>& ranks,
                                bool coordinator_runs_trials) {
  DevicePlan plan;
  plan.executor.cpu_slots = resources.cpu_slots;
  plan.executor.trials_per_gpu = resources.trials_per_gpu;
  plan.executor.devices.clear();
  std::map<std::string, int> by_kind;  // "cpu" / "GPU" → slots, for the description
  int fewest_gpus = -1, serving = 0;
  for (std::size_t r = coordinator_runs_trials ? 0 : 1; r < ranks.size(); ++r) {
    const cluster::Hello& h = ranks[r];
    const std::string who = "rank " + std::to_string(r) + " (" + printable(h.hostname) + ")";
    DevicePlan own;
    try {
      own = plan_devices(resources, h.cuda_devices, h.cuda_built);
    } catch (const config::ConfigError& e) {
      std::vector<std::string> messages;
      for (const std::string& m : e.messages()) messages.push_back(who + ": " + m);
      throw config::ConfigError(messages);
    }
    std::vector<scheduler::Device> share = own.executor.devices;
    if (own.selected_gpus > 0 && h.local_size > 1) {
      const auto n = share.size(), l = static_cast<std::size_t>(h.local_rank),
                 size = static_cast<std::size_t>(h.local_size);
      share = {share.begin() + static_cast<std::ptrdiff_t>(l * n / size),
               share.begin() + static_cast<std::ptrdiff_t>((l + 1) * n / size)};
      if (share.empty())
        throw config::ConfigError({who + ": no GPU is left for it: " + std::to_string(n) +
                                   " selected GPUs are shared by " + std::to_string(size) +
                                   " ranks on its node; start at most " + std::to_string(n) +
                                   " ranks per node (mpirun --map-by ppr:" + std::to_string(n) +
                                   ":node, srun --ntasks-per-node=" + std::to_string(n) + ")"});
      if (static_cast<int>(share.size()) < own.gpus_per_trial)
        throw config::ConfigError(
            {who + ": resources.gpus_per_trial is " + std::to_string(own.gpus_per_trial) +
             " but the rank has " + std::to_string(share.size()) + " of its node's GPUs (" +
             std::to_string(size) + " ranks share them); start fewer ranks per node"});
    }
    const int gpus = own.selected_gpus > 0 ? static_cast<int>(share.size()) : 0;
    if (gpus > 0) fewest_gpus = fewest_gpus < 0 ? gpus : std::min(fewest_gpus, gpus);
    for (const auto& d : share) plan.executor.devices.push_back(d.on_rank(static_cast<int>(r)));
    by_kind[gpus > 0 ? "GPU" : "cpu"] +=
        gpus > 0 ? gpus * resources.trials_per_gpu : resources.cpu_slots;
    plan.gpus_per_trial =
        std::max(plan.gpus_per_trial, own.gpus_per_trial > 1 ? own.gpus_per_trial : 1);
    ++serving;
  }
  if (serving == 0)
    throw config::ConfigError(
        {"the coordinator runs no trials and there is no other rank: start "
         "more ranks (mpirun -np 2 or more)"});
  plan.selected_gpus = std::max(fewest_gpus, 0);
  if (plan.selected_gpus > 0 && plan.gpus_per_trial > plan.selected_gpus)
    plan.gpus_per_trial = plan.selected_gpus;
  for (const auto& [kind, slots] : by_kind)
    plan.description += (plan.description.empty() ? "" : " + ") + std::to_string(slots) + " " +
                        kind + (slots == 1 ? " slot" : " slots");
  plan.description += " on " + std::to_string(serving) + " ranks (" + std::to_string(ranks.size()) +
                      " in the job" + (coordinator_runs_trials ? "" : ", rank 0 coordinates only") +
                      ")";
  return plan;
}

}  // namespace sweep::run
