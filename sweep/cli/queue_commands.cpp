/*
 * queue_commands.cpp — the background queue on the command line: submit, worker, status, wait,
 * cancel, logs, fetch. Every command takes --queue PATH (default $SWEEP_HOME/queue.db, else
 * ~/.sweep/queue.db) and calls sweep/queue/queue.h; nothing here touches SQL.
 *
 * `sweep report JOB` lives in report_command.cpp (NAME or JOB), through sweep/queue/job_report.h.
 *
 * The decision: readers (status, wait, logs, fetch) open the queue read-only, so polling them in
 * a loop never takes SQLite's write lock away from the workers; only submit, cancel and the
 * worker write, and of them only submit and the worker create the queue. A JOB argument is
 * checked before the queue is opened: a bad id is a usage error (exit 2) whether or not a queue
 * exists.
 */
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <type_traits>

#include "common/format.h"
#include "common/json.h"
#include "sweep/cli/cluster_job.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/text_table.h"
#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/queue/job_attempts.h"
#include "sweep/queue/job_bounds.h"
#include "sweep/queue/job_log.h"
#include "sweep/queue/job_target.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/worker.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::cli {

namespace {

namespace fs = std::filesystem;
using queue::Queue;

constexpr int kExitCancelled = 3;
constexpr int kExitTimeout = 124;

std::filesystem::path queue_path(const std::string& given) {
  return given.empty() ? queue::default_queue_path() : fs::path(given);
}

void add_queue_option(CLI::App& command, std::string& path) {
  command
      .add_option("--queue", path,
                  "Queue database (default: $SWEEP_HOME/queue.db, else ~/.sweep/queue.db)")
      ->type_name("PATH");
}

// The running `sweep` executable, for starting a detached worker.
std::string self_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the sweep executable (/proc/self/exe): " + ec.message());
  return self.string();
}

std::int64_t parse_job_id(const std::string& text) {
  std::size_t used = 0;
  long long id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || id < 1)
    throw CLI::ValidationError("JOB", "'" + text + "' is not a job id (sweep status lists them)");
  return id;
}

// A flag's value through one of worker.h's or job_bounds.h's bounds, checked as the command line
// is read (before a worker claims anything, before a job is stored or waited for): a bad one is a
// usage error, exit 2, "--lease: nan: expected seconds above 0, at most 604800 (a week)". Not
// CLI11's PositiveNumber / Range: they let NaN through (every comparison with it is false), and
// their message gives the bounds of a double in 309 digits. Two readings of CLI11's are refused
// or corrected here: an empty value, which it takes as 0 (`--timeout ''` waited for good), and a
// whole number with a leading 0, which it reads as octal (--priority 010 was 8): whole numbers are
// decimal. A text that is not a number at all is left to CLI11's "Could not convert". Given with
// ->transform, not ->check: CLI11 hands a check a copy, and the decimal text must reach the value.
template <typename T>
CLI::Validator bounded(std::string (*problem)(T), std::string description) {
  return CLI::Validator(
      [problem](std::string& input) {
        if (input.empty()) return std::string("'': expected a number, not an empty value");
        const std::string given = printable(input);
        T value{};
        if constexpr (std::is_integral_v<T>) {
          const std::string digits = input.starts_with('+') ? input.substr(1) : input;
          long long wide = 0;
          const auto [end, error] =
              std::from_chars(digits.data(), digits.data() + digits.size(), wide);
          if (digits.empty() || end != digits.data() + digits.size())
            return given + ": expected a whole number";
          // Beyond T: said in the bound's own words, through the nearest end of T.
          const bool negative = digits.starts_with('-');
          if (error == std::errc::result_out_of_range || wide > std::numeric_limits<T>::max() ||
              wide < std::numeric_limits<T>::min())
            value = negative ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
          else
            value = static_cast<T>(wide);
        } else if (!CLI::detail::lexical_cast(input, value)) {
          return std::string();
        }
        if (const std::string why = problem(value); !why.empty()) return given + ": " + why;
        if constexpr (std::is_integral_v<T>) input = std::to_string(value);  // as CLI11 reads it
        return std::string();
      },
      std::move(description));
}

// The note of the trial's latest state only: a trial interrupted by a stopped worker and later
// completed keeps its old stop reason in the row, which says nothing about it now.
std::string trial_note(const queue::TrialResult& t) {
  if (t.state == TrialState::failed || t.state == TrialState::diverged)
    return t.error.empty() ? t.stop_reason : t.error;
  if (t.state == TrialState::stopped_early || t.state == TrialState::cancelled ||
      t.state == TrialState::interrupted)
    return t.stop_reason;
  if (t.state == TrialState::queued)
    return t.wait_reason.empty() ? "waiting for a free slot" : t.wait_reason;
  return "";
}

// Digits per parameter that tell apart the values in a job's trials (text_table.h).
ParamDigits trial_digits(const queue::JobResults& results) {
  std::vector<const Json*> params;
  for (const queue::TrialResult& t : results.trials) params.push_back(&t.params);
  return table_digits(params);
}

// A job whose worker died and which no live worker will pick up would wait forever.
bool no_worker_for_pending_jobs(const Queue& q) {
  bool pending = false;
  for (const JobRow& row : q.jobs()) pending = pending || !is_terminal(row.state);
  return pending && queue::alive_workers(q.paths()).empty();
}

void say_no_worker(const Queue& q, std::ostream& out) {
  out << "note: no worker is alive for " << q.paths().db.string()
      << ", so no job moves on (a worker that held one has died): start one with  sweep worker "
         "--detach"
      << (q.paths().db == queue::default_queue_path() ? std::string()
                                                      : " --queue " + q.paths().db.string())
      << "\n";
}

void warn_if_no_worker(const Queue& q, std::ostream& out) {
  if (no_worker_for_pending_jobs(q)) say_no_worker(q, out);
}

// ---- submit ----------------------------------------------------------------------------------

void add_submit(CLI::App& app, int& exit_code) {
  struct Options {
    std::string file, queue, name, out;
    std::vector<std::string> overrides;
    std::int64_t priority = 0;
    int max_attempts = 3;
    bool no_worker = false;
    double worker_idle_exit = 60;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c =
      app.add_subcommand("submit", "Queue a sweep to run in the background; prints its job id");
  c->add_option("FILE", o->file, "The sweep's YAML config")->required();
  add_set_option(*c, o->overrides);
  add_queue_option(*c, o->queue);
  c->add_option("--priority", o->priority, "Higher runs first; equal priority: submit order")
      ->capture_default_str()
      ->transform(bounded(queue::priority_problem, "in [-2^53 - 2^53]"));
  c->add_option("--name", o->name, "Name of the sweep (default: the config's name)")
      ->type_name("NAME");
  c->add_option("--out", o->out, "Directory for runs (default: output.dir, runs)")
      ->type_name("DIR")
      ->check(CLI::Validator(
          [](const std::string& out) {
            // Refused here, not by the worker that would fail the job later.
            if (out.empty()) return std::string("'': expected a directory, not an empty value");
            const std::string problem = queue::output_dir_problem(fs::absolute(out));
            return problem.empty() ? problem : printable(out) + ": " + problem;
          },
          "DIR"));
  c->add_option("--max-attempts", o->max_attempts,
                "A trial that killed its worker this many times is failed; the sweep goes on")
      ->capture_default_str()
      ->transform(bounded(queue::max_attempts_problem,
                          "in [1 - " + std::to_string(queue::kMaxTrialAttempts) + "]"));
  c->add_flag("--no-worker", o->no_worker, "Do not start a worker (one runs elsewhere)");
  c->add_option("--worker-idle-exit", o->worker_idle_exit,
                "The started worker exits once the queue stayed empty this many seconds (0: never)")
      ->capture_default_str()
      ->transform(
          bounded(queue::idle_exit_problem, "in [0 - " + shortest(queue::kMaxWorkerSeconds) + "]"));
  c->footer(
      "Validates the config like `sweep validate`, stores the job and returns; a detached worker\n"
      "(`sweep worker`) is started when none is alive. The sweep goes to OUT/NAME/sweep.db as\n"
      "with `sweep run`. Exit status: 0 queued, 2 bad config, 1 any other error.\n"
      "Examples:\n"
      "  sweep submit configs/quickstart.yaml\n"
      "  sweep submit configs/fashion-mnist-lenet.yaml --set training.epochs=2 --priority 5");
  c->callback([o, c, &exit_code] {
    queue::SubmitOptions options;
    options.overrides = o->overrides;
    if (c->count("--name")) options.name = o->name;
    if (c->count("--out")) options.output_dir = o->out;
    options.priority = o->priority;
    options.max_attempts = o->max_attempts;
    options.worker_idle_exit_s = o->worker_idle_exit;
    if (!o->no_worker) options.worker_binary = self_executable();
    try {
      Queue q(queue_path(o->queue));
      const queue::Job job = q.submit(o->file, options);
      print_config_warnings(job.config_warnings());
      std::cout << job.id() << "\n";
      if (!job.started_worker_log().empty())
        std::cerr << "started a worker (log: " << job.started_worker_log() << ")\n";
      exit_code = kExitOk;
    } catch (const config::ConfigError& e) {
      exit_code = report_config_error(o->file, e.messages());
    }
  });
}

// ---- worker ----------------------------------------------------------------------------------

// --registration-fd: the lock a detaching parent took and left open for its worker; never one of
// the standard streams, which the detached worker has pointed at its log.
std::string registration_fd_problem(int fd) {
  if (fd >= 3) return "";
  return "expected the file descriptor of an inherited worker lock, 3 or above";
}

void add_worker(CLI::App& app, int& exit_code) {
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

// ---- status ----------------------------------------------------------------------------------

void print_job_status(const Queue& q, std::int64_t id) {
  const queue::Job job = q.job(id);
  const queue::JobResults results = job.fetch();
  const JobRow& row = results.job;
  std::cout << "job " << row.id << ": " << (results.sweep_name.empty() ? "?" : results.sweep_name)
            << ", " << to_string(row.state) << ", " << queue::attempt_text(row);
  if (!row.lease_owner.empty()) std::cout << ", worker " << row.lease_owner;
  std::cout << "\n";
  if (!row.error.empty()) std::cout << "error: " << row.error << "\n";
  if (!results.db_path.empty()) std::cout << "database: " << results.db_path.string() << "\n";
  if (!results.started) {
    std::cout << (row.state == JobState::queued ? "waiting for a worker to claim it\n"
                                                : "no trial has started\n");
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"TRIAL", "STATE", "DEVICE", "PARAMS", "BEST " + results.metric_name, "ATTEMPTS", "NOTE"}};
  const ParamDigits digits = trial_digits(results);
  for (const queue::TrialResult& t : results.trials)
    rows.push_back(
        {std::to_string(t.number), std::string(to_string(t.state)),
         t.device.empty() ? "-" : t.device, params_text(t.params, ParamNames::last_parts, digits),
         t.best ? significant(*t.best) : "-", std::to_string(t.attempts), trial_note(t)});
  print_table(std::cout, rows);
}

void add_status(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("status", "Show queued jobs, or one job's trials");
  c->add_option("JOB", o->job, "A job id: show its trials, their states and why they wait");
  add_queue_option(*c, o->queue);
  c->footer(
      "Examples:\n"
      "  sweep status        # every job: id, name, state, progress, worker\n"
      "  sweep status 3      # job 3's trials");
  c->callback([o, c, &exit_code] {
    // A bad id (an empty one too) is the same usage error whether or not a queue exists.
    std::optional<std::int64_t> id;
    if (c->count("JOB")) id = parse_job_id(o->job);
    const fs::path path = queue_path(o->queue);
    if (id && !fs::exists(path))
      throw Error("no job " + std::to_string(*id) + ": no queue database at " + path.string() +
                  " (sweep submit FILE creates it)");
    if (!fs::exists(path)) {
      std::cout << "no jobs (" << path.string() << " does not exist yet)\n";
      exit_code = kExitOk;
      return;
    }
    Queue q(path, {.read_only = true});
    if (id) {
      print_job_status(q, *id);
      exit_code = kExitOk;
      return;
    }
    std::vector<std::vector<std::string>> rows = {{"JOB", "NAME", "STATE", "PROGRESS", "WORKER"}};
    for (const queue::JobProgress& p : q.progress())
      rows.push_back({std::to_string(p.job.id), p.name.empty() ? "?" : p.name,
                      std::string(to_string(p.job.state)), p.summary(),
                      p.job.lease_owner.empty() ? "-" : p.job.lease_owner});
    if (rows.size() == 1) {
      std::cout << "no jobs in " << path.string() << "\n";
    } else {
      print_table(std::cout, rows);
      warn_if_no_worker(q, std::cout);
    }
    exit_code = kExitOk;
  });
}

// ---- wait / cancel ---------------------------------------------------------------------------

void add_wait(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
    double timeout = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("wait", "Block until a job ends");
  c->add_option("JOB", o->job, "The job id")->required();
  add_queue_option(*c, o->queue);
  c->add_option("--timeout", o->timeout, "Give up after this many seconds (0: never)")
      ->transform(bounded(queue::wait_timeout_problem,
                          "in [0 - " + shortest(queue::kMaxWaitSeconds) + "]"));
  c->footer(
      "Exit status: 0 done, 1 failed, 3 cancelled, 124 timed out.\n"
      "Examples:\n"
      "  sweep wait 3\n"
      "  sweep wait 3 --timeout 600 && sweep fetch 3");
  c->callback([o, &exit_code] {
    const std::int64_t id = parse_job_id(o->job);  // before the queue: a usage error either way
    Queue q(queue_path(o->queue), {.read_only = true});
    const queue::Job job = q.job(id);
    // Waits in slices, looking between them whether any worker is still alive: a worker that
    // dies while we wait must not leave us waiting in silence. Said again after workers came back
    // and were lost once more.
    using Seconds = std::chrono::duration<double>;
    const auto deadline = std::chrono::steady_clock::now() + Seconds(o->timeout);
    std::optional<JobState> state;
    bool warned = false;
    for (;;) {
      if (is_terminal(job.state())) {
        state = job.state();
        break;
      }
      const bool no_worker = no_worker_for_pending_jobs(q);
      if (no_worker && !warned) say_no_worker(q, std::cerr);
      warned = no_worker;
      Seconds slice(2.0);
      if (o->timeout > 0) {
        const Seconds left = deadline - std::chrono::steady_clock::now();
        if (left <= Seconds(0)) break;
        slice = std::min(slice, left);
      }
      if ((state = job.wait(slice))) break;
    }
    if (!state) {
      std::cerr << "job " << job.id() << " is still " << to_string(job.state()) << " after "
                << o->timeout << " s\n";
      exit_code = kExitTimeout;
      return;
    }
    std::cout << "job " << job.id() << " " << to_string(*state) << "\n";
    const JobRow row = job.row();
    if (!row.error.empty()) std::cerr << "job " << job.id() << ": " << row.error << "\n";
    exit_code = *state == JobState::done        ? kExitOk
                : *state == JobState::cancelled ? kExitCancelled
                                                : kExitFailure;
  });
}

void add_cancel(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("cancel", "Cancel a queued or running job");
  c->add_option("JOB", o->job, "The job id")->required();
  add_queue_option(*c, o->queue);
  c->footer(
      "A queued job is cancelled at once. A running one: its worker sees it at its next\n"
      "heartbeat; running trials stop at their next iteration and keep their checkpoint.\n"
      "Exit status: 0 cancelled, 1 the job had already ended.\n"
      "Example:\n"
      "  sweep cancel 3");
  c->callback([o, &exit_code] {
    const std::int64_t id = parse_job_id(o->job);  // before the queue: a usage error either way
    Queue q(queue_path(o->queue), {.must_exist = true});
    const queue::Job job = q.job(id);
    const JobState before = job.state();
    if (job.cancel()) {
      std::cout << "job " << job.id() << " cancelled"
                << (before == JobState::running ? ": its worker stops the running trials at their "
                                                  "next iteration"
                                                : "")
                << "\n";
      exit_code = kExitOk;
    } else {
      std::cerr << "job " << job.id() << " had already ended (" << to_string(job.state()) << ")\n";
      exit_code = kExitFailure;
    }
  });
}

// ---- logs ------------------------------------------------------------------------------------

void add_logs(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
    bool follow = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("logs", "Print a job's log (what its worker's run printed)");
  c->add_option("JOB", o->job, "The job id")->required();
  add_queue_option(*c, o->queue);
  c->add_flag("-f,--follow", o->follow,
              "Keep printing new lines until the job ends and its worker wrote its last line");
  c->footer(
      "Every attempt of the job appends to one log (its progress, each trial's end, why it\n"
      "stopped). Each trial's own log is OUT/NAME/trials/NNN/log.txt. -f ends with the log's\n"
      "last line: a cancelled job's worker writes on after the job shows cancelled (its trials\n"
      "stopping, their summary); -f waits for that, or for the worker to die.\n"
      "Examples:\n"
      "  sweep logs 3\n"
      "  sweep logs 3 -f");
  c->callback([o, &exit_code] {
    const std::int64_t id = parse_job_id(o->job);  // before the queue: a usage error either way
    Queue q(queue_path(o->queue), {.read_only = true});
    const queue::Job job = q.job(id);
    const fs::path log = q.paths().job_log(job.id());
    queue::JobLogTail tail(log, job.id());
    if (!o->follow) {
      if (!fs::exists(log)) {
        std::cerr << "job " << job.id() << " has no log yet (" << to_string(job.state()) << ")\n";
        exit_code = is_terminal(job.state()) ? kExitFailure : kExitOk;
        return;
      }
      std::cout << tail.read_new() << std::flush;
      exit_code = kExitOk;
      return;
    }
    // The job's row ending is not the log ending (job_log.h): once the row is terminal, follow
    // until the latest attempt's closing line is read, or until that attempt's worker is found
    // dead (what it wrote before dying is read after that look, so nothing is missed).
    bool warned = false;
    auto next_worker_look = std::chrono::steady_clock::now();
    for (;;) {
      const bool ended = is_terminal(job.state());  // read before the file: nothing is missed
      std::cout << tail.read_new() << std::flush;
      if (ended) {
        if (!tail.attempt_open()) break;
        const std::string owner = tail.open_attempt_owner();
        if (!queue::worker_alive(q.paths(), owner)) {
          std::cout << tail.read_new() << std::flush;
          if (tail.attempt_open())
            std::cerr << "job " << job.id() << ": its worker " << printable(owner)
                      << " died before finishing the log\n";
          break;
        }
      } else if (std::chrono::steady_clock::now() >= next_worker_look) {
        // A dead worker's running job that no live worker will reclaim never ends: say so (once
        // per loss), as `sweep wait` does, every 2 s as it does, and keep following (a worker
        // started later takes the job on).
        next_worker_look = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        const bool no_worker = no_worker_for_pending_jobs(q);
        if (no_worker && !warned) say_no_worker(q, std::cerr);
        warned = no_worker;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    exit_code = kExitOk;
  });
}

// ---- fetch -----------------------------------------------------------------------------------

void add_fetch(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("fetch", "Print a job's results: every trial and the best");
  c->add_option("JOB", o->job, "The job id")->required();
  add_queue_option(*c, o->queue);
  c->add_flag("--json", o->json, "One JSON object: job, sweep, trials");
  c->footer(
      "Works at any time (partial results while the job runs).\n"
      "Examples:\n"
      "  sweep fetch 3\n"
      "  sweep fetch 3 --json | jq '.trials[] | select(.state == \"completed\")'");
  c->callback([o, &exit_code] {
    const std::int64_t id = parse_job_id(o->job);  // before the queue: a usage error either way
    Queue q(queue_path(o->queue), {.read_only = true});
    const queue::JobResults results = q.job(id).fetch();
    if (o->json) {
      std::cout << json_text(results.to_json(), 2) << "\n";
      exit_code = kExitOk;
      return;
    }
    std::cout << "job " << results.job.id << " (" << to_string(results.job.state) << "): sweep "
              << results.sweep_name << "\n";
    if (!results.started) {
      std::cout << "no results yet: no trial has started\n";
      exit_code = kExitOk;
      return;
    }
    std::vector<std::vector<std::string>> rows = {
        {"TRIAL", "STATE", "PARAMS", "BEST " + results.metric_name}};
    const ParamDigits digits = trial_digits(results);
    for (const queue::TrialResult& t : results.trials)
      rows.push_back({std::to_string(t.number), std::string(to_string(t.state)),
                      params_text(t.params, ParamNames::last_parts, digits),
                      t.best ? significant(*t.best) : "-"});
    print_table(std::cout, rows);
    if (results.best && is_broken(results.best->trial.state))  // only broken trials have a value
      std::cout << "best: no successful trial (trial " << results.best->trial.number << " reached "
                << results.metric_name << " " << significant(results.best->value) << " before it "
                << to_string(results.best->trial.state) << ")\n";
    else if (results.best)
      std::cout << "best: trial " << results.best->trial.number << ", " << results.metric_name
                << " " << significant(results.best->value) << " ("
                << printable(
                       params_text(results.best->trial.params, ParamNames::last_parts, digits))
                << ")\n";
    std::cout << "database: " << results.db_path.string() << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace

void add_queue_commands(CLI::App& app, int& exit_code) {
  add_submit(app, exit_code);
  add_worker(app, exit_code);
  add_status(app, exit_code);
  add_wait(app, exit_code);
  add_cancel(app, exit_code);
  add_logs(app, exit_code);
  add_fetch(app, exit_code);
}

}  // namespace sweep::cli
