/*
 * store.h — everything durable in sweep, behind one object over one SQLite file.
 *
 * The non-obvious decisions:
 *  - One connection per Store, and one Store per process: a Store is thread-safe (an internal
 *    mutex serialises its connection), so the scheduler's threads share it instead of opening
 *    more connections that would only fight over SQLite's single write lock.
 *  - Every write is one short `BEGIN IMMEDIATE` transaction, retried as a whole if SQLite still
 *    reports "busy" after its 10 s busy_timeout; every multi-query read is one snapshot. A reader
 *    in another process (WAL mode) never blocks a writer and never sees "database is locked".
 *  - Claims are compare-and-set in SQL (`UPDATE ... WHERE state = 'queued'`), so two workers in
 *    two processes can never both get the same trial or job.
 *
 * Thread safety: every method may be called from any thread at the same time.
 *
 *   sweep::Store store("runs/demo/sweep.db");
 *   auto sweep_id = store.create_sweep({.name = "demo", .config_yaml = text,
 *                                       .metric_name = "val_accuracy"});
 *   store.add_trials(sweep_id, specs);
 *   while (auto trial = store.claim_next_trial(sweep_id, "cuda:0")) { ... }
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/check.h"
#include "common/json.h"
#include "common/trial_state.h"
#include "store/records.h"

namespace sweep {

// UTC seconds since the Unix epoch, the unit of every time in the store.
double utc_now();

struct StoreOptions {
  bool read_only = false;  // `sweep status`, the report: no schema changes, writes throw
  int busy_timeout_ms = 10'000;
  std::chrono::milliseconds retry_limit{60'000};  // give up (sweep::Error) after this long busy
  std::string vfs{};  // a registered SQLite VFS by name; "" = SQLite's default (tests: faults)
};

class Store {
 public:
  // Opens (read-write: creating the file, its directory and the schema if missing, and migrating
  // an older schema). Throws sweep::Error naming the path when the file is a directory, is not a
  // SQLite database, is a SQLite database that is not sweep's, or was written by a newer sweep;
  // such a file is recognised before anything is written, so its bytes stay as they were.
  // Read-only, a finished sweep opens on a read-only file system too.
  explicit Store(const std::filesystem::path& path, StoreOptions options = {});
  ~Store();
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const;
  bool read_only() const;
  int schema_version() const;  // of the open file (== current_schema_version() once migrated)
  static int current_schema_version();

  // ---- sweeps ----
  enum class IfExists { fail, reuse };
  // Returns the new sweep's id. A name already taken throws sweep::Error, unless `reuse`: then the
  // existing sweep's id is returned unchanged (resume).
  std::int64_t create_sweep(const SweepSpec& spec, IfExists if_exists = IfExists::fail);
  std::optional<SweepRow> find_sweep(std::string_view name) const;
  std::optional<SweepRow> find_sweep(std::int64_t id) const;
  // find_sweep(name), or sweep::Error naming the file and the sweeps it does hold (a sweep's
  // directory renamed or copied keeps its sweep's name inside).
  SweepRow sweep_named(std::string_view name) const;
  // All sweeps, newest first, with their trials counted by state (one query).
  std::vector<SweepSummary> list_sweeps() const;
  // Sets started_at on the first `running`, finished_at on completed/failed/cancelled/interrupted.
  void set_sweep_state(std::int64_t sweep_id, SweepState state);

  // ---- trials ----
  // Adds all trials in one transaction (state queued); returns their ids in the given order.
  // A number already used in the sweep throws and adds nothing.
  std::vector<std::int64_t> add_trials(std::int64_t sweep_id, std::span<const TrialSpec> specs);
  // queued -> running on `device`, atomically: false when the trial was not queued (someone else
  // claimed it, it was cancelled...). Counts an attempt, clears wait_reason, sets started_at.
  bool claim_trial(std::int64_t trial_id, std::string_view device);
  // Claims the queued trial with the lowest number, or nullopt when none is queued.
  std::optional<TrialRow> claim_next_trial(std::int64_t sweep_id, std::string_view device);
  // Moves a trial to `state`, recording what `update` holds. Terminal states set finished_at.
  // Returns false, changing nothing, when the trial is already terminal (a late "completed"
  // never overwrites a user's "cancelled"). Throws if the trial does not exist.
  bool set_trial_state(std::int64_t trial_id, TrialState state, const TrialUpdate& update = {});
  // Records why a queued trial waits ("all 2 GPUs busy"); `sweep status` shows it.
  void set_wait_reason(std::int64_t trial_id, std::string_view reason);
  // Records the checkpoint / log paths and the summary without changing the state.
  void update_trial(std::int64_t trial_id, const TrialUpdate& update);
  std::optional<TrialRow> trial(std::int64_t trial_id) const;
  std::optional<TrialRow> trial_by_number(std::int64_t sweep_id, std::int64_t number) const;
  std::vector<TrialRow> trials(std::int64_t sweep_id) const;  // ordered by number
  // Trials whose parameter `name` equals `value` (compared as JSON text), ordered by number.
  std::vector<TrialRow> trials_with_param(std::int64_t sweep_id, std::string_view name,
                                          const sweep::Json& value) const;

  // ---- resume ----
  // After a crash: running and interrupted trials go back to queued (their checkpoint_path is
  // kept, so the runner can continue from it). Returns how many.
  std::int64_t requeue_unfinished(std::int64_t sweep_id);
  // `--retry-failed`: failed trials go back to queued, error cleared (diverged ones stay: the same
  // seed would diverge again). Returns how many.
  std::int64_t requeue_failed(std::int64_t sweep_id);

  // ---- metrics ----
  // Upserts the points in one transaction: writing (trial, name, step) again replaces the point.
  // For many writers, prefer MetricBatcher (store/metric_batcher.h).
  void log_metrics(std::span<const MetricPoint> points);
  void log_metric(const MetricPoint& point) { log_metrics({&point, 1}); }
  // Every point of every trial of the sweep, in one query, ordered by trial number, name, step.
  // `visit` runs under the store's lock: it must not call back into this Store.
  void for_each_metric(std::int64_t sweep_id,
                       const std::function<void(const MetricPoint&)>& visit) const;
  std::vector<MetricPoint> metrics(std::int64_t sweep_id) const;  // the same points, collected
  std::vector<MetricPoint> trial_metrics(std::int64_t trial_id) const;  // ordered by name, step
  // The latest point (highest step) of every series of every trial in the sweep (live status),
  // ordered by trial number and name; one query.
  std::vector<MetricPoint> latest_metrics(std::int64_t sweep_id) const;
  // The trial that ranks first by common/trial_score.h's rule (its best finite value of the
  // sweep's metric, max or min by metric_goal, from the metrics table, so it works while the sweep
  // runs; ties go to the earlier step, then the lower trial number). A broken trial (is_broken:
  // failed, diverged) ranks below every other: when the result is one, the sweep has no successful
  // trial, and callers say so (is_broken(best->trial.state)). nullopt when no trial reported a
  // finite value.
  std::optional<BestTrial> best_trial(std::int64_t sweep_id) const;

  // ---- events ----
  std::int64_t add_event(std::int64_t sweep_id, std::optional<std::int64_t> trial_id,
                         std::string_view kind, std::string_view message);
  // Events with id > after_id, oldest first (pass the last id seen to follow a log).
  std::vector<EventRow> events(std::int64_t sweep_id, std::int64_t after_id = 0) const;
  // How many events of `kind` the sweep holds about trial `trial_id`, or, with nullopt, about the
  // whole sweep (no trial).
  std::int64_t count_events(std::int64_t sweep_id, std::optional<std::int64_t> trial_id,
                            std::string_view kind) const;

  // ---- jobs: the background queue ----
  std::int64_t enqueue_job(const JobSpec& spec);
  // Claims the queued job with the highest priority (oldest first among equals) for `owner`,
  // with a lease of `lease` from now; counts an attempt. nullopt when nothing is queued.
  std::optional<JobRow> claim_next_job(std::string_view owner, std::chrono::duration<double> lease);
  // Extends the lease. False when `owner` no longer holds the job (reclaimed, cancelled,
  // finished): the worker must then stop working on it.
  bool heartbeat_job(std::int64_t job_id, std::string_view owner,
                     std::chrono::duration<double> lease);
  // Running jobs whose lease expired before `now` go back to queued (attempts keeps counting
  // the claims: the next claim sees the loss). Returns the ids reclaimed.
  std::vector<std::int64_t> reclaim_expired_jobs(double now = utc_now());
  // running -> queued at once, for a worker that stops cleanly (SIGTERM, Ctrl-C) with the job
  // unfinished. The claim counted an attempt; a clean hand-back is not a failure, so the job's
  // attempt budget (max_attempts) grows by one and attempts stays a count of claims (a later
  // claim sees attempts > 1 and continues the sweep). False when `owner` does not hold it.
  bool release_job(std::int64_t job_id, std::string_view owner);
  // running -> done (exit_code 0) or failed; false when `owner` no longer holds the job.
  bool finish_job(std::int64_t job_id, std::string_view owner, JobState final_state,
                  std::optional<std::int64_t> exit_code, std::string_view error = {});
  // queued or running -> cancelled; false when it had already ended. A running job's worker
  // learns it at its next heartbeat.
  bool cancel_job(std::int64_t job_id);
  std::optional<JobRow> job(std::int64_t job_id) const;
  std::vector<JobRow> jobs() const;  // every job, by id

  // ---- export (`sweep export`, the report) ----
  // One row per trial, ordered by number: number, state, device, one column per parameter
  // (sorted by name), best_<metric> for the sweep metric, final_<name> for every series (value
  // at the highest step), attempts, started_at, finished_at, duration_s, stop_reason, error.
  // Values as text: numbers in shortest round-trip form, missing cells "".
  ExportTable export_table(std::int64_t sweep_id) const;
  // {"sweep": {id, name, state, metric: {name, goal}, ...}, "trials": [one object per trial:
  // {"number", "state", "device", "params": {...}, "best": {metric: value}, "final": {name:
  // value}, "summary": {...}, "attempts", times, "stop_reason", "error", paths}]}; NaN/Inf: null.
  sweep::Json export_json(std::int64_t sweep_id) const;

  struct Impl;  // store/store_impl.h

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep
