/*
 * cluster_job.h — the part `sweep` plays when mpirun or srun started it as one of N tasks.
 *
 * Rank 0 runs the command as usual with a Coordinator (run, resume and worker use it: every
 * rank's devices become slots); every other rank serves trials until rank 0 is done. A build
 * without MPI started as N > 1 tasks refuses, on every rank, instead of running N independent
 * sweeps into one directory.
 */
#pragma once

#include <memory>
#include <optional>

namespace sweep::cluster {
class Coordinator;
}

namespace sweep::cli {

class ClusterJob {
 public:
  ClusterJob();
  ~ClusterJob();
  ClusterJob(const ClusterJob&) = delete;
  ClusterJob& operator=(const ClusterJob&) = delete;

  // A value: this process is done (a host rank that served, or a refusal), exit with it.
  std::optional<int> start(int& argc, char**& argv);
  // After rank 0's command: a lost rank ends the whole job (MPI_Abort), else a clean end.
  int finish(int exit_code);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// Rank 0's coordinator while a ClusterJob runs one; nullptr otherwise.
cluster::Coordinator* coordinator();

}  // namespace sweep::cli
