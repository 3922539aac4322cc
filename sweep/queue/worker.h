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

#include <chrono>
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

// ---- the bounds of a worker's numbers ----------------------------------------------------------
// One place for each, used by `sweep worker`'s flags (checked as the command line is read, before
// anything is claimed) and by run_worker (a C++ caller's options). Every number must be finite:
// a NaN lease was stored as a NULL lease_expires_at, which no `expired` comparison ever matches,
// so a killed worker's job stayed `running` forever.

// resources.cpu_slots' own bound (config.h).
inline constexpr int kMaxCpuSlots = config::kMaxSlotsPerDevice;
// The longest lease, heartbeat, poll or idle time: a week. A longer lease leaves a dead worker's
// job unclaimed for longer than anyone waits (idle-exit has 0 for never), and a week stays far
// below where a steady clock's nanosecond count overflows (292 years).
inline constexpr double kMaxWorkerSeconds = 7 * 24 * 3600.0;
// The shortest heartbeat interval: the heartbeat thread's tick. A shorter one cannot be kept
// (the thread looks at its clock once a tick); it only turns into a database write every tick.
inline constexpr double kMinHeartbeatS = std::chrono::duration<double>(kHeartbeatTick).count();
// The shortest pause between an idle worker's looks at the queue: each look is a query of the
// queue database (and a write when it claims), and 100 a second is already more than any queue
// needs; 0 would be a busy loop against the workers and submitters sharing it.
inline constexpr double kMinPollS = 0.01;

// Each returns "" for a value in bounds, else what the option takes ("expected seconds above 0,
// at most 604800 (a week)"), for the caller to put after the flag and the value.
std::string lease_problem(double lease_s);
std::string heartbeat_problem(double interval_s);
// The heartbeat renews the lease, so it must come before the lease runs out: shorter than it.
std::string heartbeat_lease_problem(double interval_s, double lease_s);
std::string idle_exit_problem(double idle_exit_s);  // 0 = never
std::string poll_problem(double poll_s);
std::string cpu_slots_problem(int cpu_slots);  // a given --cpu-slots: 1 to kMaxCpuSlots
// The first of `options`' numbers out of bounds, with its flag and value ("--lease nan: expected
// seconds above 0, at most 604800 (a week)"); "" when all are in bounds. cpu_slots 0 (each job's
// own) is in bounds here.
std::string worker_options_problem(const WorkerOptions& options);

// Throws sweep::Error for a bad --devices text.
void apply_worker_devices(config::ResourcesSpec& resources, const std::string& devices,
                          int cpu_slots);

// Runs until idle or signalled (SIGTERM / SIGINT once: the running job's trials checkpoint and
// the job is handed back to the queue; twice: die at once). Returns the exit status (0). Throws
// sweep::Error, before claiming anything, for options out of bounds (worker_options_problem) or
// a bad --devices.
int run_worker(const WorkerOptions& options);

}  // namespace sweep::queue
