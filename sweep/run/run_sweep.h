/*
 * run_sweep.h — `sweep run` and `sweep resume` as library calls.
 *
 * run_sweep: creates OUT/NAME/ (sweep.db, trials/NNN/{log.txt, checkpoint.bin}, report.html),
 * stores the sweep and its trials, takes the sweep's lock (one process at a time; SweepBusy
 * names the holder), picks the devices, runs every trial through the scheduler's
 * Executor with the sweep's stopping policy, shows progress, and writes the report at the end.
 * Ctrl-C once: running trials checkpoint and end `interrupted`, queued ones never start, the
 * sweep is `interrupted` and `sweep resume NAME` continues it; twice: quit at once.
 *
 * resume_sweep: completed (and stopped, diverged, cancelled) trials never run again; interrupted
 * and unfinished ones continue from their checkpoint; failed ones only with retry_failed. The
 * trials are rebuilt by expanding the config stored with the sweep again (expansion is
 * deterministic) and checked against the stored parameters.
 *
 *   auto config = sweep::config::load_config("configs/quickstart.yaml");
 *   sweep::run::RunResult result = sweep::run::run_sweep(config);
 *   std::cout << result.db_path << "\n";
 */
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/trial_state.h"
namespace sweep::cluster {
class Coordinator;
}

#include "store/records.h"
#include "sweep/config/config.h"

namespace sweep::run {

struct RunOptions {
  std::string db_path;          // "" = OUT/NAME/sweep.db
  std::ostream* out = nullptr;  // progress and the final summary; nullptr = std::cout
  std::optional<bool> live;     // redraw a table in place; default: stdout is a terminal
  bool handle_sigint = true;    // install the Ctrl-C handler while the sweep runs
  bool write_report = true;     // runs/NAME/report.html at the end
  // Set from another thread to end the sweep like Ctrl-C (running trials checkpoint and end
  // `interrupted`, queued ones never start): the queue's worker, on `sweep cancel` or a lost
  // lease. nullptr = none. stop_reason is what the progress output says.
  const std::atomic<bool>* stop = nullptr;
  std::string stop_reason = "stopped";
  // Another process holding the sweep (sweep_lock.h): wait this long for it to let go, then
  // throw SweepBusy. 0 for the CLI (say so at once); a queue worker waits for a paused one.
  std::chrono::duration<double> lock_wait{0};
  // Rank 0 of an MPI job (mpirun / srun): every rank's devices are slots and trials on other
  // ranks are relayed there (cluster/coordinator.h). nullptr: this machine only.
  cluster::Coordinator* cluster = nullptr;
};

struct RunResult {
  std::string name;
  std::int64_t sweep_id = 0;
  std::filesystem::path run_dir, db_path, report_path;  // report_path empty when not written
  std::map<TrialState, int> states;                     // every trial of the sweep, by state
  std::optional<BestTrial> best;
  int trials_run = 0;  // by this call
  bool interrupted = false;
  int interrupted_by = SIGINT;    // the signal that interrupted it, when one did (sigint.h)
  std::string target_reached_by;  // "trial 3" when metric.target stopped it
  std::string store_failure;      // why the store could not be written, when that stopped it
  std::string cluster_failure;    // a rank that stopped answering, when that stopped it

  // 1 the store could not be written, a rank was lost or some trial failed, 128 + the signal
  // when interrupted (130 by Ctrl-C or a job's cancel, 143 by SIGTERM), else 0.
  int exit_code() const;
};

RunResult run_sweep(const config::SweepConfig& config, const RunOptions& options = {});

struct ResumeOptions {
  RunOptions run;
  std::string out_dir = "runs";  // where NAME/sweep.db is looked for when run.db_path is ""
  bool retry_failed = false;
  // Run on these instead of the stored config's resources (a queue worker's own devices).
  std::optional<config::ResourcesSpec> resources;
  // --set KEY=VALUE applied to the stored config for this resume: data.path and resources.* only
  // (config::check_placement_overrides), e.g. the sweep copied to a machine whose data lives
  // elsewhere. Not stored: a later resume takes the stored config again.
  std::vector<std::string> overrides;
};

RunResult resume_sweep(const std::string& name, const ResumeOptions& options = {});

std::filesystem::path default_db_path(const std::string& out_dir, const std::string& name);

}  // namespace sweep::run
