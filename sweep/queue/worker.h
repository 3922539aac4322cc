/*
 * worker.h — `sweep worker`: claims jobs from the queue one at a time and runs each with the same
 * code as `sweep run` (run_sweep into OUT/NAME/sweep.db; resume_sweep when a previous worker of
 * the job died), until it is idle for idle_exit_s or gets SIGTERM / Ctrl-C.
 *
 * The decision: one job at a time per worker process. A worker changes its working directory to
 * the directory each job was submitted from (so relative data paths and output.dir mean what they
 * meant to the submitter), which is process-wide state; several jobs at once means several
 * workers, each with its own --devices.
 *
 *   sweep::queue::WorkerOptions options;
 *   options.queue_db = sweep::queue::default_queue_path();
 *   options.idle_exit_s = 60;
 *   return sweep::queue::run_worker(options);
 */
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "sweep/config/config.h"
#include "sweep/queue/heartbeat.h"

namespace sweep::cluster {
class Coordinator;
}

namespace sweep::queue {

struct WorkerOptions {
  std::filesystem::path queue_db;
  std::string devices;          // "" = each job's resources; "cpu"; "all"; "0,2" or "cuda:0,cuda:2"
  int cpu_slots = 0;            // trials at once on the CPU; 0 = each job's resources.cpu_slots
  double idle_exit_s = 0;       // exit once nothing was queued or running this long; 0 = never
  double poll_s = 0.5;          // how often an idle worker looks at the queue
  HeartbeatTiming timing;       // lease and heartbeat interval
  std::ostream* log = nullptr;  // the worker's own messages; nullptr = std::cout
  int registration_fd = -1;     // a detached worker's inherited lock (worker_registry.h)
  std::string worker_id;        // with registration_fd
  // Rank 0 of an MPI job (mpirun / srun sweep worker): each job's trials run over every rank's
  // devices (RunOptions::cluster). nullptr: this machine only.
  cluster::Coordinator* cluster = nullptr;
};

// Throws sweep::Error for a bad --devices text.
void apply_worker_devices(config::ResourcesSpec& resources, const std::string& devices,
                          int cpu_slots);

// Runs until idle or signalled (SIGTERM / SIGINT once: the running job's trials checkpoint and
// the job is handed back to the queue; twice: die at once). Returns the exit status (0).
int run_worker(const WorkerOptions& options);

}  // namespace sweep::queue
