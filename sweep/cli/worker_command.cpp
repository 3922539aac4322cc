/*
 * worker_command.cpp — `sweep worker`: run queued jobs in the foreground, or start a detached
 * worker (--detach) that does.
 */
#include <iostream>
#include <memory>

#include "sweep/cli/cluster_job.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/worker.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::cli {

namespace {

// --registration-fd: the lock a detaching parent took and left open for its worker; never one of
// the standard streams, which the detached worker has pointed at its log.
std::string registration_fd_problem(int fd) {
  if (fd >= 3) return "";
  return "expected the file descriptor of an inherited worker lock, 3 or above";
}

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, devices, worker_id;
    int cpu_slots = 0, registration_fd = -1;
    double idle_exit = 0, lease = 10, heartbeat = 2, poll = 0.5;
    bool detach = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("worker", "Run queued jobs (foreground, or --detach)");
  add_queue_option(*c, o->queue);
  c->add_flag("--detach", o->detach, "Start the worker in the background and return");
  c->add_option("--devices", o->devices,
                "This worker's devices: cpu, all (every GPU, else the CPU slots), or GPU "
                "indices 0,2 (default: each job's resources)")
      ->check(CLI::Validator(
          [](const std::string& devices) {
            // Empty is how "not given" is kept: given empty, it would silently mean that.
            return devices.empty() ? std::string(
                                         "'': expected cpu, all or GPU indices such as 0,2, not an "
                                         "empty value")
                                   : std::string();
          },
          "DEVICES"));
  // The bounds are worker.h's (run_worker checks them too); the heartbeat against the lease is
  // checked once both are read, in the callback.
  c->add_option("--cpu-slots", o->cpu_slots, "Trials at once on the CPU (default: each job's)")
      ->transform(bounded(queue::cpu_slots_problem,
                          "in [1 - " + std::to_string(queue::kMaxCpuSlots) + "]"));
  c->add_option("--idle-exit", o->idle_exit,
                "Exit once the queue stayed empty this many seconds (0: never)")
      ->capture_default_str()
      ->transform(
          bounded(queue::idle_exit_problem, "in [0 - " + shortest(queue::kMaxWorkerSeconds) + "]"));
  c->add_option("--lease", o->lease, "Seconds a claimed job stays ours without a heartbeat")
      ->capture_default_str()
      ->transform(
          bounded(queue::lease_problem, "in (0 - " + shortest(queue::kMaxWorkerSeconds) + "]"));
  c->add_option("--heartbeat", o->heartbeat, "Seconds between heartbeats (shorter than --lease)")
      ->capture_default_str()
      ->transform(bounded(queue::heartbeat_problem, "in [" + shortest(queue::kMinHeartbeatS) +
                                                        " - " + shortest(queue::kMaxWorkerSeconds) +
                                                        "]"));
  c->add_option("--poll", o->poll, "Seconds between looks at an empty queue")
      ->capture_default_str()
      ->transform(bounded(queue::poll_problem, "in [" + shortest(queue::kMinPollS) + " - " +
                                                   shortest(queue::kMaxWorkerSeconds) + "]"));
  // Set by a detaching parent only: the worker's lock, already taken, and its id.
  c->add_option("--registration-fd", o->registration_fd)
      ->group("")
      ->transform(bounded(registration_fd_problem, "an inherited file descriptor"));
  c->add_option("--worker-id", o->worker_id)->group("");
  c->footer(
      "A worker claims one job at a time (highest priority, then oldest), renews its lease with\n"
      "heartbeats, and runs it as `sweep run` would. Killed, its job is reclaimed by the next\n"
      "worker after the lease and continues from the trials' checkpoints. SIGTERM or Ctrl-C:\n"
      "running trials checkpoint and the job goes back to the queue.\n"
      "Examples:\n"
      "  sweep worker                       # foreground (systemd), until Ctrl-C\n"
      "  sweep worker --detach --idle-exit 600\n"
      "  sweep worker --devices 0 & sweep worker --devices 1 &   # one worker per GPU");
  c->callback([o, c, &exit_code] {
    if ((c->count("--registration-fd") > 0) != (c->count("--worker-id") > 0))
      throw CLI::ValidationError("--registration-fd",
                                 "given without --worker-id, or --worker-id without it: both come "
                                 "from a detaching worker, together");
    if (const std::string why = queue::heartbeat_lease_problem(o->heartbeat, o->lease);
        !why.empty())
      throw CLI::ValidationError(
          "--heartbeat",
          shortest(o->heartbeat) + (c->count("--heartbeat") ? "" : " (the default)") + ": " + why);
    if (o->detach) {
      queue::DetachedWorkerOptions detached;
      detached.sweep_binary = self_executable();
      detached.only_if_none_alive = false;
      auto add = [&](const char* flag, const std::string& value) {
        detached.worker_args.push_back(flag);
        detached.worker_args.push_back(value);
      };
      if (!o->devices.empty()) add("--devices", o->devices);
      if (o->cpu_slots > 0) add("--cpu-slots", std::to_string(o->cpu_slots));
      add("--idle-exit", shortest(o->idle_exit));
      add("--lease", shortest(o->lease));
      add("--heartbeat", shortest(o->heartbeat));
      add("--poll", shortest(o->poll));
      const queue::QueuePaths paths(queue_path(o->queue));
      Store check(paths.db);  // a foreign or corrupt file fails here, not in the background
      const std::string id = queue::start_detached_worker(paths, detached);
      std::cout << "worker " << id << " started (log: " << paths.worker_log(id).string() << ")\n";
      exit_code = kExitOk;
      return;
    }
    queue::WorkerOptions options;
    options.queue_db = queue_path(o->queue);
    options.devices = o->devices;
    options.cpu_slots = o->cpu_slots;
    options.idle_exit_s = o->idle_exit;
    options.poll_s = o->poll;
    options.timing.lease_s = o->lease;
    options.timing.interval_s = o->heartbeat;
    options.registration_fd = o->registration_fd;
    options.worker_id = o->worker_id;
    options.cluster = coordinator();
    exit_code = queue::run_worker(options);
  });
}

}  // namespace sweep::cli
