/*
 * store_jobs.cpp — the background queue: enqueue, leased claims, heartbeats, reclaim, finish.
 *
 * The decision: a claim is a lease, not ownership. A worker holds a job only while it renews the
 * lease (heartbeat_job); every later write by that worker names itself as owner and succeeds only
 * if it still holds the job, so a worker that stalled past its lease and was reclaimed can never
 * overwrite the outcome of the worker that took over. `attempts` counts claims; reclaiming an
 * expired lease always re-queues the job. Whether a job whose workers keep dying is given up is
 * for the worker that claims it next to decide: only it can look into the job's sweep and see
 * which trials were running when the worker died (sweep/queue/crash_recovery.h). A count of
 * claims cannot tell one trial that keeps killing its worker from several trials hit once each,
 * and a job failed here would keep the trials of its last loss `running` for good.
 */
#include "common/json.h"
#include "store/store_impl.h"

namespace sweep {

using store_detail::job_row;

std::int64_t Store::enqueue_job(const JobSpec& spec) {
  if (spec.config_yaml.empty()) throw Error("a job needs its config text (config_yaml is empty)");
  if (spec.max_attempts < 1)
    throw Error("a job's max_attempts must be at least 1, not " +
                std::to_string(spec.max_attempts));
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&] {
    auto s = conn.statement(
        "INSERT INTO jobs (config_path, config_yaml, priority, state, max_attempts, created_at, "
        "working_dir, sweep_name, output_dir, overrides_json, trial_crash_limit) "
        "VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)");
    const JobTarget& t = spec.target;
    s->bind_all(spec.config_path, spec.config_yaml, spec.priority, spec.max_attempts, utc_now(),
                t.working_dir, t.sweep_name, t.output_dir, sweep::Json(t.overrides).dump(),
                t.trial_crash_limit)
        .step();
    return conn.last_insert_rowid();
  });
}

std::optional<JobRow> Store::claim_next_job(std::string_view owner,
                                            std::chrono::duration<double> lease) {
  if (owner.empty()) throw Error("a worker claiming a job must name itself (owner is empty)");
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&]() -> std::optional<JobRow> {
    auto s = conn.statement(
        "UPDATE jobs SET state = 'running', lease_owner = ?1, lease_expires_at = ?2 + ?3, "
        "heartbeat_at = ?2, started_at = coalesce(started_at, ?2), attempts = attempts + 1 "
        "WHERE id = (SELECT id FROM jobs WHERE state = 'queued' "
        "            ORDER BY priority DESC, created_at, id LIMIT 1) "
        "RETURNING " SWEEP_JOB_COLUMNS);
    s->bind_all(owner, utc_now(), lease.count());
    if (!s->step()) return std::nullopt;
    return job_row(*s);
  });
}

bool Store::heartbeat_job(std::int64_t job_id, std::string_view owner,
                          std::chrono::duration<double> lease) {
  return impl_->execute(
             "UPDATE jobs SET heartbeat_at = ?1, lease_expires_at = ?1 + ?2 "
             "WHERE id = ?3 AND lease_owner = ?4 AND state = 'running'",
             utc_now(), lease.count(), job_id, owner) == 1;
}

std::vector<std::int64_t> Store::reclaim_expired_jobs(double now) {
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&] {
    std::vector<std::int64_t> ids;
    auto s = conn.statement(
        "UPDATE jobs SET state = 'queued', lease_owner = '', lease_expires_at = NULL "
        "WHERE state = 'running' AND lease_expires_at < ?1 RETURNING id");
    s->bind_all(now);
    while (s->step()) ids.push_back(s->int64(0));
    return ids;
  });
}

bool Store::release_job(std::int64_t job_id, std::string_view owner) {
  return impl_->execute(
             "UPDATE jobs SET state = 'queued', lease_owner = '', lease_expires_at = NULL, "
             "max_attempts = max_attempts + 1 "
             "WHERE id = ?1 AND lease_owner = ?2 AND state = 'running'",
             job_id, owner) == 1;
}

bool Store::finish_job(std::int64_t job_id, std::string_view owner, JobState final_state,
                       std::optional<std::int64_t> exit_code, std::string_view error) {
  if (final_state != JobState::done && final_state != JobState::failed)
    throw Error("a worker finishes a job as done or failed, not " +
                std::string(to_string(final_state)));
  // lease_owner stays: it records which worker ran the job to the end.
  return impl_->execute(
             "UPDATE jobs SET state = ?1, exit_code = ?2, error = ?3, finished_at = ?4, "
             "lease_expires_at = NULL WHERE id = ?5 AND lease_owner = ?6 AND state = 'running'",
             to_string(final_state), exit_code, error, utc_now(), job_id, owner) == 1;
}

bool Store::cancel_job(std::int64_t job_id) {
  return impl_->execute(
             "UPDATE jobs SET state = 'cancelled', finished_at = ?, lease_expires_at = NULL "
             "WHERE id = ? AND state IN ('queued', 'running')",
             utc_now(), job_id) == 1;
}

std::optional<JobRow> Store::job(std::int64_t job_id) const {
  return impl_->query_one("SELECT " SWEEP_JOB_COLUMNS " FROM jobs WHERE id = ?", job_row, job_id);
}

std::vector<JobRow> Store::jobs() const {
  return impl_->query_all("SELECT " SWEEP_JOB_COLUMNS " FROM jobs ORDER BY id", job_row);
}

}  // namespace sweep
