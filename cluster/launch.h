/*
 * launch.h — was this process started as one of several tasks (mpirun, srun), and the cluster's
 * settings. Needs no MPI, so a build without MPI can still tell that it was started by mpirun -np 4
 * and refuse, instead of running four independent sweeps into one directory.
 */
#pragma once

#include <optional>
#include <string>

namespace sweep::cluster {

struct LaunchInfo {
  int size = 1;  // tasks in the job (1: not started as part of one)
  int rank = 0;
  std::string launcher;  // "mpirun", "srun", "an MPI launcher"
};

// From the launchers' environment: OMPI_COMM_WORLD_SIZE/RANK (Open MPI's mpirun), PMI_SIZE/RANK
// (MPICH, srun --mpi=pmi2), SLURM_STEP_NUM_TASKS/SLURM_PROCID (srun).
LaunchInfo detect_launch();

// How long rank 0 waits for a word from a rank (any message; hosts send a heartbeat every
// second) before it calls the rank lost: SWEEP_RANK_TIMEOUT seconds, default 60.
inline constexpr const char* kRankTimeoutVariable = "SWEEP_RANK_TIMEOUT";
inline constexpr double kDefaultRankTimeoutS = 60;

// SWEEP_COORDINATOR_ONLY=1: rank 0 runs no trials itself (it only coordinates), e.g. when it sits
// on a login or service node of the allocation.
inline constexpr const char* kCoordinatorOnlyVariable = "SWEEP_COORDINATOR_ONLY";

struct ClusterOptions {
  double rank_timeout_s = kDefaultRankTimeoutS;
  double heartbeat_s = 1;
  bool coordinator_runs_trials = true;  // rank 0 offers its own devices as slots too
};

// ClusterOptions from SWEEP_RANK_TIMEOUT and SWEEP_COORDINATOR_ONLY (throws sweep::Error on a
// timeout that is not a positive number of seconds, or a flag that is not 0 or 1).
ClusterOptions cluster_options_from_environment();

}  // namespace sweep::cluster
