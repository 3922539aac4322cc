/*
 * store_impl.h — what a Store holds, shared by the store_*.cpp files that implement its parts.
 *
 * Every public method takes the mutex for its whole duration (one statement or one transaction)
 * and nothing else: the connection is the only shared state, so there is no lock ordering to get
 * wrong. Row readers (read_trial, ...) take a Statement positioned on a row whose columns follow
 * the matching *_COLUMNS list, so every query of a table shares one column order.
 */
#pragma once

#include <mutex>

#include "store/sqlite_connection.h"
#include "store/store.h"

namespace sweep {

struct Store::Impl {
  Impl(const std::filesystem::path& path, const StoreOptions& options);

  // Lock for the duration of one public call; throws if a write is attempted read-only.
  std::unique_lock<std::mutex> lock_for_write();
  std::unique_lock<std::mutex> lock_for_read() const { return std::unique_lock(mutex); }

  mutable std::mutex mutex;
  mutable store_detail::Connection conn;
  int schema_version = 0;
};

namespace store_detail {

#define SWEEP_SWEEP_COLUMNS                                                                    \
  "id, name, config_yaml, config_path, metric_name, metric_goal, state, devices, created_at, " \
  "started_at, finished_at"
SweepRow read_sweep(const Statement& s, int first_col = 0);

#define SWEEP_TRIAL_COLUMNS                                                                  \
  "id, sweep_id, number, state, device, params_json, config_yaml, seed, repeat, queued_at, " \
  "started_at, finished_at, wait_reason, stop_reason, error, attempts, checkpoint_path, "    \
  "log_path, summary_json, updated_at"
TrialRow read_trial(const Statement& s, int first_col = 0);

#define SWEEP_JOB_COLUMNS                                                                    \
  "id, sweep_id, config_path, config_yaml, priority, state, lease_owner, lease_expires_at, " \
  "heartbeat_at, attempts, max_attempts, created_at, started_at, finished_at, error, exit_code"
JobRow read_job(const Statement& s);

// Metric point columns: trial_id, name, step, epoch, value, value_kind, wall_time.
#define SWEEP_METRIC_COLUMNS "trial_id, name, step, epoch, value, value_kind, wall_time"
MetricPoint read_metric(const Statement& s, int first_col = 0);

// value_kind text for a double, and the double back from (value, kind).
std::string_view value_kind_of(double v);
double value_from(std::optional<double> stored, std::string_view kind);

// JSON text stored by the store, parsed back; a damaged cell throws naming the table and column.
nlohmann::json parse_json_cell(const std::string& text, const char* where);

}  // namespace store_detail
}  // namespace sweep
