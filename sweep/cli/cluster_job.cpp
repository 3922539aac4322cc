/*
 * cluster_job.cpp — MPI session, transport and coordinator, in that order, torn down in reverse.
 */
#include "sweep/cli/cluster_job.h"

#include <iostream>

#include "cluster/coordinator.h"
#include "cluster/launch.h"
#include "common/format.h"
#include "sweep/cli/commands.h"
#include "sweep/run/cluster_trials.h"
#ifdef SWEEP_HAVE_MPI
#include "cluster/mpi_transport.h"
#endif

namespace sweep::cli {

namespace {
cluster::Coordinator* g_coordinator = nullptr;
}

cluster::Coordinator* coordinator() { return g_coordinator; }

struct ClusterJob::State {
#ifdef SWEEP_HAVE_MPI
  std::optional<cluster::MpiSession> session;
  std::optional<cluster::MpiTransport> transport;
#endif
  std::optional<cluster::Coordinator> coordinator;
};

ClusterJob::ClusterJob() : state_(std::make_unique<State>()) {}

ClusterJob::~ClusterJob() {
  g_coordinator = nullptr;
  state_->coordinator.reset();  // Shutdown to the hosts, then the transport, then MPI_Finalize
}

std::optional<int> ClusterJob::start(int& argc, char**& argv) {
  const cluster::LaunchInfo launch = cluster::detect_launch();
  if (launch.size <= 1) return std::nullopt;
#ifndef SWEEP_HAVE_MPI
  if (launch.rank == 0)
    std::cerr << "sweep: started by " << launch.launcher << " as " << launch.size
              << " tasks, but this sweep was built without MPI: each task would run the whole "
                 "sweep into the same directory. Install libopenmpi-dev and build again (CMake "
                 "finds MPI), or start sweep without "
              << launch.launcher << ".\n";
  return kExitUsage;
#else
  try {
    const cluster::ClusterOptions options = cluster::cluster_options_from_environment();
    auto& s = *state_;
    s.session.emplace(argc, argv);
    if (s.session->size() <= 1) return std::nullopt;
    s.transport.emplace(*s.session);
    if (s.session->rank() != 0) return run::serve_host(*s.transport, options);
    s.coordinator.emplace(*s.transport, options);
    g_coordinator = &*s.coordinator;
    return std::nullopt;
  } catch (const std::exception& e) {
    std::cerr << "sweep: " << printable(e.what()) << "\n";
    return kExitFailure;
  }
#endif
}

int ClusterJob::finish(int exit_code) {
  if (state_->coordinator) {
    if (const std::string lost = state_->coordinator->lost(); !lost.empty()) {
      std::cerr << "sweep: " << lost << ": ending the MPI job\n";
      state_->coordinator->abort(exit_code != 0 ? exit_code : kExitFailure);
    }
  }
  return exit_code;
}

}  // namespace sweep::cli
