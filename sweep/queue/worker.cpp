/*
 * worker.cpp — the claim loop, signals, idle exit.
 *
 * Idle exit happens under the spawn lock, after one last look at the queue and with the worker's
 * registration dropped before the lock is released: a `sweep submit` that enqueues meanwhile
 * either has its job claimed here or finds no live worker and starts one. Nothing is ever left
 * queued with nobody to run it.
 */
#include "sweep/queue/worker.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <thread>

#include "common/check.h"
#include "common/format.h"
#include "sweep/queue/job_attempts.h"
#include "sweep/queue/job_runner.h"
#include "sweep/queue/worker_registry.h"
#include "sweep/run/devices.h"

namespace sweep::queue {

namespace fs = std::filesystem;

namespace {

std::atomic<int> g_signals{0};

extern "C" void on_stop_signal(int signal_number) {
  // Second signal: the user wants out now; the default action ends the process.
  if (g_signals.fetch_add(1) >= 1) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
}

class StopSignals {
 public:
  StopSignals() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    SWEEP_CHECK_SYS(::sigaction(SIGTERM, &action, &previous_term_));
    SWEEP_CHECK_SYS(::sigaction(SIGINT, &action, &previous_int_));
  }
  ~StopSignals() {
    ::sigaction(SIGTERM, &previous_term_, nullptr);
    ::sigaction(SIGINT, &previous_int_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  static bool received() { return g_signals.load() > 0; }

 private:
  struct sigaction previous_term_ {};
  struct sigaction previous_int_ {};
};

bool any_running(const Store& queue) {
  for (const JobRow& row : queue.jobs())
    if (row.state == JobState::running) return true;
  return false;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

int parse_index(const std::string& text, const std::string& whole) {
  std::size_t used = 0;
  int value = -1;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 0)
    throw Error("--devices '" + whole + "': '" + text +
                "' is not a GPU index (give cpu, all, or indices like 0,2 or cuda:0,cuda:2)");
  return value;
}

// "" when `value` is finite and in [min, max] (above min when min_open), else `expected`.
std::string seconds_problem(double value, double min, bool min_open, const std::string& expected) {
  const bool in_bounds =
      std::isfinite(value) && (min_open ? value > min : value >= min) && value <= kMaxWorkerSeconds;
  return in_bounds ? std::string() : "expected " + expected;
}

const std::string& at_most_a_week() {
  static const std::string text = "at most " + shortest(kMaxWorkerSeconds) + " (a week)";
  return text;
}

}  // namespace

std::string lease_problem(double lease_s) {
  return seconds_problem(lease_s, 0, true, "seconds above 0, " + at_most_a_week());
}

std::string heartbeat_problem(double interval_s) {
  return seconds_problem(interval_s, kMinHeartbeatS, false,
                         "seconds from " + shortest(kMinHeartbeatS) +
                             " (the heartbeat thread's tick), " + at_most_a_week() +
                             ", shorter than --lease");
}

std::string heartbeat_lease_problem(double interval_s, double lease_s) {
  if (interval_s < lease_s) return "";
  return "expected a heartbeat shorter than --lease " + shortest(lease_s) +
         ": each heartbeat renews the lease, so the lease must outlast the time between two";
}

std::string idle_exit_problem(double idle_exit_s) {
  return seconds_problem(idle_exit_s, 0, false,
                         "seconds from 0 (0: never exit), " + at_most_a_week());
}

std::string poll_problem(double poll_s) {
  return seconds_problem(poll_s, kMinPollS, false,
                         "seconds from " + shortest(kMinPollS) + ", " + at_most_a_week());
}

std::string cpu_slots_problem(int cpu_slots) {
  if (cpu_slots >= 1 && cpu_slots <= kMaxCpuSlots) return "";
  return "expected a whole number of slots from 1 to " + std::to_string(kMaxCpuSlots) +
         " (resources.cpu_slots' bound: each slot is a thread)";
}

std::string worker_options_problem(const WorkerOptions& options) {
  auto said = [](const char* flag, const std::string& value, const std::string& problem) {
    return problem.empty() ? problem : std::string(flag) + " " + value + ": " + problem;
  };
  const HeartbeatTiming& t = options.timing;
  for (const std::string& problem :
       {said("--lease", shortest(t.lease_s), lease_problem(t.lease_s)),
        said("--heartbeat", shortest(t.interval_s), heartbeat_problem(t.interval_s)),
        said("--heartbeat", shortest(t.interval_s),
             heartbeat_lease_problem(t.interval_s, t.lease_s)),
        said("--idle-exit", shortest(options.idle_exit_s), idle_exit_problem(options.idle_exit_s)),
        said("--poll", shortest(options.poll_s), poll_problem(options.poll_s)),
        said("--cpu-slots", std::to_string(options.cpu_slots),
             options.cpu_slots == 0 ? std::string() : cpu_slots_problem(options.cpu_slots))})
    if (!problem.empty()) return problem;
  return "";
}

void apply_worker_devices(config::ResourcesSpec& resources, const std::string& devices,
                          int cpu_slots) {
  if (cpu_slots != 0)  // 0: each job's own
    if (const std::string problem = cpu_slots_problem(cpu_slots); !problem.empty())
      throw Error("--cpu-slots " + std::to_string(cpu_slots) + ": " + problem);
  if (cpu_slots > 0) resources.cpu_slots = cpu_slots;
  if (devices.empty()) return;
  if (devices == "cpu") {
    resources.execution = "cpu";
    return;
  }
  resources.gpus.clear();
  resources.all_gpus = true;
  if (devices == "all") {  // every GPU, else the CPU slots: what execution: auto means
    resources.execution = "auto";
    return;
  }
  resources.execution = "gpu";
  if (devices == "gpu") return;
  resources.all_gpus = false;
  std::size_t start = 0;
  while (start <= devices.size()) {
    const std::size_t comma = std::min(devices.find(',', start), devices.size());
    std::string item = devices.substr(start, comma - start);
    if (item.rfind("cuda:", 0) == 0) item = item.substr(5);
    const int index = parse_index(item, devices);
    if (std::find(resources.gpus.begin(), resources.gpus.end(), index) != resources.gpus.end())
      throw Error("--devices '" + devices + "' names GPU " + std::to_string(index) + " twice");
    resources.gpus.push_back(index);
    start = comma + 1;
  }
}

int run_worker(const WorkerOptions& options) {
  std::ostream& log = options.log ? *options.log : std::cout;
  if (const std::string problem = worker_options_problem(options); !problem.empty())
    throw Error(problem);
  {  // a bad --devices is an error now, not on every job
    config::ResourcesSpec probe;
    apply_worker_devices(probe, options.devices, options.cpu_slots);
    // GPUs this machine does not have: each job the worker claimed failed on them, one after
    // another, until the queue was empty.
    if (probe.execution == "gpu")
      if (const std::string why =
              run::missing_local_gpus(probe.all_gpus ? std::vector<int>{} : probe.gpus);
          !why.empty())
        throw Error("--devices " + options.devices + ": " + why +
                    " (give --devices cpu, or all: every GPU where there are some, else the CPU "
                    "slots)");
  }
  const QueuePaths paths(options.queue_db);
  Store queue(paths.db);
  StopSignals signals;
  WorkerRegistration registration =
      options.registration_fd >= 0
          ? WorkerRegistration(paths, options.registration_fd, options.worker_id)
          : WorkerRegistration(paths);
  const std::string owner = host_name() + ":" + std::to_string(::getpid()) + ":" + random_hex(6);
  registration.describe({{"owner", owner},
                         {"pid", ::getpid()},
                         {"devices", options.devices.empty() ? "per job" : options.devices},
                         {"cpu_slots", options.cpu_slots},
                         {"started_at", utc_now()},
                         {"log", paths.worker_log(registration.id()).string()}});
  log << "worker " << owner << " on " << paths.db.string() << ": lease "
      << shortest(options.timing.lease_s) << " s, heartbeat every "
      << shortest(options.timing.interval_s) << " s"
      << (options.idle_exit_s > 0 ? ", exits after " + shortest(options.idle_exit_s) + " s idle"
                                  : std::string())
      << std::endl;
  if (options.devices == "all")
    log << "--devices all: every GPU of this machine, else the CPU slots ("
        << (options.cpu_slots > 0 ? std::to_string(options.cpu_slots)
                                  : std::string("each job's cpu_slots"))
        << "), as resources.execution: auto; each job's log says which it got" << std::endl;

  const JobRunContext context{queue, paths, options, owner, [] { return StopSignals::received(); }};
  using Clock = std::chrono::steady_clock;
  auto idle_since = Clock::now();
  auto last_reclaim = Clock::time_point{};
  const auto reclaim_every = std::chrono::duration<double>(options.timing.interval_s);

  while (!StopSignals::received()) {
    if (Clock::now() - last_reclaim >= reclaim_every) {
      last_reclaim = Clock::now();
      for (std::int64_t id : queue.reclaim_expired_jobs())
        log << "reclaimed job " << id << ": its worker's lease expired" << std::endl;
    }
    std::optional<JobRow> job =
        queue.claim_next_job(owner, std::chrono::duration<double>(options.timing.lease_s));
    // Idle means nothing queued and nothing running: a running job may be a dead worker's,
    // which this worker must stay to reclaim once its lease expires.
    if (!job && options.idle_exit_s > 0 && any_running(queue)) idle_since = Clock::now();
    if (!job && options.idle_exit_s > 0 &&
        Clock::now() - idle_since >= std::chrono::duration<double>(options.idle_exit_s)) {
      SpawnLock spawn(paths);
      job = queue.claim_next_job(owner, std::chrono::duration<double>(options.timing.lease_s));
      if (!job) {
        registration.release();
        log << "the queue stayed empty for " << options.idle_exit_s << " s: exiting" << std::endl;
        return 0;
      }
    }
    if (job) {
      log << "job " << job->id << ": claimed (" << attempt_text(*job) << "), log "
          << paths.job_log(job->id).string() << std::endl;
      const StopCause cause = run_claimed_job(context, *job);
      const auto row = queue.job(job->id);
      log << "job " << job->id << ": " << (row ? to_string(row->state) : "gone")
          << (cause == StopCause::none ? ""
                                       : std::string(" (") + std::string(describe(cause)) + ")")
          << std::endl;
      idle_since = Clock::now();
      continue;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
  }
  log << "signal received: exiting" << std::endl;
  return 0;
}

}  // namespace sweep::queue
