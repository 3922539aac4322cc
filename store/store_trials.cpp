/*
 * store_trials.cpp — the trials and trial_params tables: adding, claiming, state changes, resume.
 *
 * The decision: a claim is one compare-and-set UPDATE (`... WHERE state = 'queued'`) inside a
 * BEGIN IMMEDIATE transaction, and success is read from the statement itself (changes() or a
 * RETURNING row), never from an earlier SELECT, which another process could have made stale.
 * Terminal states are final at the SQL level for the same reason: the guard sits in the UPDATE.
 */
#include <cmath>
#include <optional>
#include <string>

#include "common/json.h"
#include "store/store_impl.h"

namespace sweep {
namespace {

using store_detail::read_trial;
using store_detail::trial_row;

// "'completed', 'failed', ..." built from common/trial_state.h, so the SQL follows is_terminal().
const std::string& terminal_states_sql() {
  static const std::string list = [] {
    std::string out;
    for (auto s : {TrialState::queued, TrialState::running, TrialState::completed,
                   TrialState::failed, TrialState::diverged, TrialState::stopped_early,
                   TrialState::cancelled, TrialState::interrupted})
      if (is_terminal(s))
        out += std::string(out.empty() ? "'" : ", '") + std::string(to_string(s)) + "'";
    return out;
  }();
  return list;
}

void require_trial(store_detail::Connection& conn, std::int64_t trial_id) {
  auto s = conn.statement("SELECT 1 FROM trials WHERE id = ?");
  s->bind_all(trial_id);
  if (!s->step()) throw Error("no trial with id " + std::to_string(trial_id));
}

std::optional<std::string> dump_summary(const TrialUpdate& u) {
  if (!u.summary) return std::nullopt;
  return json_text(*u.summary);
}

// The name of a NaN or infinite number within `value` ("lr", "opt.betas.1"), if there is one.
std::optional<std::string> non_finite_in(const sweep::Json& value, const std::string& name) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return name;
  if (!value.is_structured()) return std::nullopt;
  std::size_t index = 0;
  for (const auto& [key, item] : value.items()) {
    const std::string part = value.is_array() ? std::to_string(index++) : key;
    if (auto found = non_finite_in(item, name.empty() ? part : name + "." + part)) return found;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::int64_t> Store::add_trials(std::int64_t sweep_id,
                                            std::span<const TrialSpec> specs) {
  for (const auto& spec : specs) {
    if (!spec.params.is_object())
      throw Error("trial " + std::to_string(spec.number) + ": params must be a JSON object, got " +
                  spec.params.dump());
    // JSON has no NaN or infinity: it would be stored (and exported, and handed to a program) as
    // null, and two trials of nan and inf would read alike. The config keeps them as text.
    if (const auto name = non_finite_in(spec.params, ""))
      throw Error("trial " + std::to_string(spec.number) + ": parameter '" + *name +
                  "' is a NaN or infinite number, which JSON cannot hold; give it as text "
                  "(\"nan\", \"inf\")");
  }
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&] {
    std::vector<std::int64_t> ids;
    ids.reserve(specs.size());
    const double now = utc_now();
    for (const auto& spec : specs) {
      {
        auto s = conn.statement(
            "INSERT INTO trials (sweep_id, number, state, params_json, config_yaml, seed, repeat, "
            "wait_reason, queued_at, updated_at) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)");
        s->bind_all(sweep_id, spec.number, spec.params.dump(), spec.config_yaml, spec.seed,
                    spec.repeat, spec.wait_reason, now, now)
            .step();
      }
      ids.push_back(conn.last_insert_rowid());
      for (const auto& [name, value] : spec.params.items()) {
        auto s = conn.statement(
            "INSERT INTO trial_params (trial_id, name, value_json) VALUES (?, ?, ?)");
        s->bind_all(ids.back(), name, value.dump()).step();
      }
    }
    return ids;
  });
}

bool Store::claim_trial(std::int64_t trial_id, std::string_view device) {
  return impl_->execute(
             "UPDATE trials SET state = 'running', device = ?1, started_at = ?2, finished_at = "
             "NULL, "
             "attempts = attempts + 1, wait_reason = '', updated_at = ?2 "
             "WHERE id = ?3 AND state = 'queued'",
             device, utc_now(), trial_id) == 1;
}

std::optional<TrialRow> Store::claim_next_trial(std::int64_t sweep_id, std::string_view device) {
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&]() -> std::optional<TrialRow> {
    auto s = conn.statement(
        "UPDATE trials SET state = 'running', device = ?1, started_at = ?2, finished_at = NULL, "
        "attempts = attempts + 1, wait_reason = '', updated_at = ?2 "
        "WHERE id = (SELECT id FROM trials WHERE sweep_id = ?3 AND state = 'queued' "
        "            ORDER BY number LIMIT 1) "
        "RETURNING " SWEEP_TRIAL_COLUMNS);
    s->bind_all(device, utc_now(), sweep_id);
    if (!s->step()) return std::nullopt;
    return read_trial(*s);
  });
}

bool Store::set_trial_state(std::int64_t trial_id, TrialState state, const TrialUpdate& update) {
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  // finished_at marks the end of the latest run: terminal states and interrupted set it,
  // queued/running (a rerun) clear it.
  const bool ends = is_terminal(state) || state == TrialState::interrupted;
  return conn.write([&] {
    {
      auto s = conn.statement(
          "UPDATE trials SET state = ?1, error = coalesce(?2, error), "
          "stop_reason = coalesce(?3, stop_reason), summary_json = coalesce(?4, summary_json), "
          "checkpoint_path = coalesce(?5, checkpoint_path), log_path = coalesce(?6, log_path), "
          "started_at = CASE WHEN ?1 = 'running' THEN coalesce(started_at, ?7) ELSE started_at "
          "END, "
          "finished_at = CASE WHEN ?8 THEN ?7 ELSE NULL END, updated_at = ?7, "
          "config_yaml = coalesce(?10, config_yaml) "
          "WHERE id = ?9 AND state NOT IN (" +
          terminal_states_sql() + ")");
      s->bind_all(to_string(state), update.error, update.stop_reason, dump_summary(update),
                  update.checkpoint_path, update.log_path, utc_now(), ends ? 1 : 0, trial_id,
                  update.config_yaml)
          .step();
    }
    if (conn.changes() == 1) return true;
    require_trial(conn, trial_id);
    return false;
  });
}

void Store::set_wait_reason(std::int64_t trial_id, std::string_view reason) {
  if (impl_->execute("UPDATE trials SET wait_reason = ?, updated_at = ? WHERE id = ?", reason,
                     utc_now(), trial_id) != 1)
    throw Error("no trial with id " + std::to_string(trial_id));
}

void Store::update_trial(std::int64_t trial_id, const TrialUpdate& update) {
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  conn.write([&] {
    auto s = conn.statement(
        "UPDATE trials SET error = coalesce(?1, error), stop_reason = coalesce(?2, stop_reason), "
        "summary_json = coalesce(?3, summary_json), "
        "checkpoint_path = coalesce(?4, checkpoint_path), log_path = coalesce(?5, log_path), "
        "config_yaml = coalesce(?8, config_yaml), updated_at = ?6 WHERE id = ?7");
    s->bind_all(update.error, update.stop_reason, dump_summary(update), update.checkpoint_path,
                update.log_path, utc_now(), trial_id, update.config_yaml)
        .step();
    if (conn.changes() != 1) throw Error("no trial with id " + std::to_string(trial_id));
  });
}

std::optional<TrialRow> Store::trial(std::int64_t trial_id) const {
  return impl_->query_one("SELECT " SWEEP_TRIAL_COLUMNS " FROM trials WHERE id = ?", trial_row,
                          trial_id);
}

std::optional<TrialRow> Store::trial_by_number(std::int64_t sweep_id, std::int64_t number) const {
  return impl_->query_one("SELECT " SWEEP_TRIAL_COLUMNS
                          " FROM trials WHERE sweep_id = ? AND number = ?",
                          trial_row, sweep_id, number);
}

std::vector<TrialRow> Store::trials(std::int64_t sweep_id) const {
  return impl_->query_all("SELECT " SWEEP_TRIAL_COLUMNS
                          " FROM trials WHERE sweep_id = ? ORDER BY number",
                          trial_row, sweep_id);
}

// The C++ face of the trial_params table (indexed by name and value): the one query that table
// exists for, also open to SQL users of the file.
std::vector<TrialRow> Store::trials_with_param(std::int64_t sweep_id, std::string_view name,
                                               const sweep::Json& value) const {
  return impl_->query_all(
      "SELECT t.id, t.sweep_id, t.number, t.state, t.device, t.params_json, t.config_yaml, "
      "t.seed, t.repeat, t.queued_at, t.started_at, t.finished_at, t.wait_reason, "
      "t.stop_reason, t.error, t.attempts, t.checkpoint_path, t.log_path, t.summary_json, "
      "t.updated_at FROM trial_params p JOIN trials t ON t.id = p.trial_id "
      "WHERE p.name = ? AND p.value_json = ? AND t.sweep_id = ? ORDER BY t.number",
      trial_row, name, value.dump(), sweep_id);
}

std::int64_t Store::requeue_unfinished(std::int64_t sweep_id) {
  // The stop reason of the interruption is history once the trial runs again (`status` shows the
  // latest state's note only).
  return impl_->execute(
      "UPDATE trials SET state = 'queued', device = '', finished_at = NULL, stop_reason = '', "
      "wait_reason = 'requeued on resume (was ' || state || ')', updated_at = ? "
      "WHERE sweep_id = ? AND state IN ('running', 'interrupted')",
      utc_now(), sweep_id);
}

std::int64_t Store::requeue_failed(std::int64_t sweep_id) {
  return impl_->execute(
      "UPDATE trials SET state = 'queued', device = '', finished_at = NULL, error = '', "
      "stop_reason = '', wait_reason = 'requeued by --retry-failed', updated_at = ? "
      "WHERE sweep_id = ? AND state = 'failed'",
      utc_now(), sweep_id);
}

}  // namespace sweep
