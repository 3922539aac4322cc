/*
 * queue.h — the background job queue as a C++ API: submit a sweep now, fetch its results later,
 * from this process or any other (MATLAB's `batch`, Ray Tune's / Optuna's restore).
 *
 * A job is one sweep config waiting in (or taken from) the queue database. A worker process
 * (`sweep worker`, started detached by submit when none is alive) claims it with a lease, keeps
 * the lease alive with heartbeats, and runs it exactly as `sweep run` would, into
 * OUT/NAME/sweep.db, so `sweep report` / `sweep show` work on it. If the worker dies, the next one
 * reclaims the job once its lease expires and continues the sweep: completed trials are never
 * rerun, interrupted ones continue from their last checkpoint.
 *
 * Thread safety: a Queue and the Jobs it hands out share one Store connection, which is
 * thread-safe; every method may be called from any thread at the same time. Any number of
 * processes may use one queue database at once (SQLite WAL, BEGIN IMMEDIATE, busy timeout).
 *
 *   sweep::queue::Queue queue;                          // $SWEEP_HOME/queue.db or
 * ~/.sweep/queue.db sweep::queue::SubmitOptions options; options.overrides = {"training.epochs=2"};
 *   options.worker_binary = "/usr/local/bin/sweep";     // start a worker if none is alive
 *   sweep::queue::Job job = queue.submit("configs/quickstart.yaml", options);
 *   std::cout << "job " << job.id() << "\n";
 *   if (job.wait(std::chrono::minutes(10)) == sweep::JobState::done) {
 *     sweep::queue::JobResults results = job.fetch();
 *     if (results.best) std::cout << "best trial " << results.best->trial.number << "\n";
 *   }
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "store/store.h"
#include "sweep/config/config.h"
#include "sweep/queue/job_target.h"
#include "sweep/queue/queue_paths.h"

namespace sweep::queue {

struct SubmitOptions {
  std::vector<std::string> overrides;     // --set KEY=VALUE, applied before validation
  std::optional<std::string> name;        // the sweep's name; unset = the config's
  std::optional<std::string> output_dir;  // unset = the config's output.dir (default runs)
  // Higher runs first; equal: submit order. From -2^53 to 2^53 (job_bounds.h; else submit
  // throws sweep::Error).
  std::int64_t priority = 0;
  // Attempts are counted per trial: a trial found `running` after its worker was lost this many
  // times is failed ("killed its worker N times") and the sweep goes on. A job whose worker is
  // lost this many times while none of its trials runs is given up (crash_recovery.h). From 1 to
  // 100 (job_bounds.h; else submit throws sweep::Error).
  int max_attempts = 3;
  std::string working_dir;  // "" = the current directory
  // When not empty: if no worker is alive, start `worker_binary worker --detach` (the `sweep`
  // executable) with these idle_exit seconds (0: never; out of worker.h's bounds, submit throws
  // sweep::Error). "" = leave starting workers to the caller.
  std::string worker_binary;
  double worker_idle_exit_s = 60;
};

// One trial of a job's sweep, for fetch().
struct TrialResult {
  std::int64_t number = 0;
  TrialState state = TrialState::queued;
  sweep::Json params = sweep::Json::object();
  std::optional<double> best;  // best value of the sweep's metric this trial reported
  std::string device, wait_reason, stop_reason, error;
  std::int64_t attempts = 0;
};

struct JobResults {
  JobRow job;
  std::string sweep_name;
  std::filesystem::path db_path;  // OUT/NAME/sweep.db
  bool started = false;           // false: no sweep database yet (still queued)
  std::string metric_name;
  MetricGoal metric_goal = MetricGoal::maximize;
  std::vector<TrialResult> trials;  // by number
  std::optional<BestTrial> best;
  sweep::Json to_json() const;  // {"job": {...}, "sweep": {...}, "trials": [...]}
};

// One line of `sweep status`: the job and its sweep's progress.
struct JobProgress {
  JobRow job;
  std::string name;
  std::int64_t trials_total = 0;     // 0 when not known yet
  std::int64_t trials_finished = 0;  // in a terminal state
  std::int64_t trials_running = 0;
  std::string metric_name;
  std::optional<double> best;
  std::string summary() const;  // "7/12 trials, best val_accuracy 0.89"
};

class Job {
 public:
  std::int64_t id() const { return id_; }
  JobState state() const;  // read now from the queue database
  JobRow row() const;
  // Blocks until the job is done, failed or cancelled, or `timeout` passes (then nullopt).
  std::optional<JobState> wait(std::optional<std::chrono::duration<double>> timeout = {}) const;
  // queued → cancelled at once; running → cancelled, and its worker stops the trials at their
  // next iteration (each keeps its checkpoint). False when the job had already ended.
  bool cancel() const;
  JobResults fetch() const;  // works at any time: partial results while it runs
  JobProgress progress() const;
  std::optional<JobTarget> target() const;  // where its sweep runs and goes
  // After submit with a worker_binary: the log of the worker it started, "" when one was alive.
  const std::string& started_worker_log() const { return worker_note_; }
  // After submit: the config's warnings (config::SweepConfig::warnings), for the submitter to see.
  const std::vector<std::string>& config_warnings() const { return config_warnings_; }

 private:
  friend class Queue;
  Job(std::shared_ptr<Store> store, std::int64_t id) : store_(std::move(store)), id_(id) {}
  std::shared_ptr<Store> store_;
  std::int64_t id_;
  std::string worker_note_;
  std::vector<std::string> config_warnings_;
};

struct QueueOptions {
  bool read_only = false;  // status / wait / fetch: never create or change the database
  // cancel: changes the database but never creates it (a queue never created holds no job).
  bool must_exist = false;
};

class Queue {
 public:
  // Opens (creating unless read_only) the queue database. A file that is not a sweep store, or
  // is damaged, throws sweep::Error naming the path.
  explicit Queue(const std::filesystem::path& path = default_queue_path(),
                 QueueOptions options = {});

  // Validates the config (throws config::ConfigError with every problem, as `sweep validate`),
  // refuses a sweep name already used in OUT/ or by a job still queued or running, enqueues,
  // and starts a detached worker when options.worker_binary is set and none is alive (throws
  // sweep::Error if that fails; the job stays queued). The SweepConfig overload takes the config
  // as loaded: options.overrides, name and output_dir are for the path overload only.
  Job submit(const std::string& config_path, const SubmitOptions& options = {});
  Job submit(const config::SweepConfig& config, const SubmitOptions& options = {});

  Job job(std::int64_t id) const;  // throws sweep::Error when there is no such job
  std::vector<JobRow> jobs() const;
  std::vector<JobProgress> progress() const;
  const QueuePaths& paths() const { return paths_; }
  Store& store() { return *store_; }

 private:
  QueuePaths paths_;
  std::shared_ptr<Store> store_;
};

// For `sweep report JOB` and friends: the job's sweep database and name.
struct JobSweep {
  std::filesystem::path db_path;
  std::string name;
};
JobSweep job_sweep(const JobRow& job);

}  // namespace sweep::queue
