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
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.h"
#include "store/sqlite_connection.h"
#include "store/store.h"

namespace sweep {

struct Store::Impl {
  Impl(const std::filesystem::path& path, const StoreOptions& options);

  // Lock for the duration of one public call; throws if a write is attempted read-only.
  std::unique_lock<std::mutex> lock_for_write();
  std::unique_lock<std::mutex> lock_for_read() const { return std::unique_lock(mutex); }

  // Most Store methods are one statement in one transaction: these say so once. `execute` runs
  // a write and returns the rows it changed; `query_one` / `query_all` read rows with `read`
  // (a row reader such as read_trial). Arguments bind to ?1, ?2, ... in order.
  template <class... Args>
  std::int64_t execute(std::string_view sql, const Args&... args) {
    auto lock = lock_for_write();
    return conn.write([&] {
      auto s = conn.statement(sql);
      s->bind_all(args...).step();
      return conn.changes();
    });
  }
  template <class Read, class... Args>
  auto query_one(std::string_view sql, Read read, const Args&... args) const
      -> std::optional<decltype(read(std::declval<const store_detail::Statement&>()))> {
    auto lock = lock_for_read();
    return conn.read([&]() -> std::optional<decltype(read(*conn.statement(sql)))> {
      auto s = conn.statement(sql);
      s->bind_all(args...);
      if (!s->step()) return std::nullopt;
      return read(*s);
    });
  }
  template <class Read, class... Args>
  auto query_all(std::string_view sql, Read read, const Args&... args) const
      -> std::vector<decltype(read(std::declval<const store_detail::Statement&>()))> {
    auto lock = lock_for_read();
    return conn.read([&] {
      std::vector<decltype(read(*conn.statement(sql)))> out;
      auto s = conn.statement(sql);
      s->bind_all(args...);
      while (s->step()) out.push_back(read(*s));
      return out;
    });
  }

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
  "heartbeat_at, attempts, max_attempts, created_at, started_at, finished_at, error, "       \
  "exit_code, working_dir, sweep_name, output_dir, overrides_json, trial_crash_limit"
JobRow read_job(const Statement& s);

// The row readers as function objects, for Impl::query_one / query_all.
inline constexpr auto trial_row = [](const Statement& s) { return read_trial(s); };
inline constexpr auto sweep_row = [](const Statement& s) { return read_sweep(s); };
inline constexpr auto job_row = [](const Statement& s) { return read_job(s); };

// Metric point columns: trial_id, name, step, epoch, value, value_kind, wall_time.
#define SWEEP_METRIC_COLUMNS "trial_id, name, step, epoch, value, value_kind, wall_time"
MetricPoint read_metric(const Statement& s, int first_col = 0);

// value_kind text for a double, and the double back from (value, kind).
std::string_view value_kind_of(double v);
double value_from(std::optional<double> stored, std::string_view kind);

// JSON text stored by the store, parsed back; a damaged cell throws naming the table and column.
sweep::Json parse_json_cell(const std::string& text, const char* where);

}  // namespace store_detail
}  // namespace sweep
