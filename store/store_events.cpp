/*
 * store_events.cpp — the events table: an append-only log per sweep.
 *
 * The decision: readers follow the log by id (`events(sweep, after_id)`), not by time, because
 * ids are assigned in commit order while wall-clock times of several processes may disagree.
 */
#include "store/store_impl.h"

namespace sweep {

std::int64_t Store::add_event(std::int64_t sweep_id, std::optional<std::int64_t> trial_id,
                              std::string_view kind, std::string_view message) {
  if (kind.empty()) throw Error("an event needs a kind");
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&] {
    auto s = conn.statement(
        "INSERT INTO events (sweep_id, trial_id, time, kind, message) VALUES (?, ?, ?, ?, ?)");
    s->bind_all(sweep_id, trial_id, utc_now(), kind, message).step();
    return conn.last_insert_rowid();
  });
}

std::vector<EventRow> Store::events(std::int64_t sweep_id, std::int64_t after_id) const {
  return impl_->query_all(
      "SELECT id, sweep_id, trial_id, time, kind, message FROM events "
      "WHERE sweep_id = ? AND id > ? ORDER BY id",
      [](const store_detail::Statement& s) {
        return EventRow{s.int64(0), s.int64(1), s.optional_int64(2),
                        s.real(3),  s.text(4),  s.text(5)};
      },
      sweep_id, after_id);
}

std::int64_t Store::count_events(std::int64_t sweep_id, std::optional<std::int64_t> trial_id,
                                 std::string_view kind) const {
  return *impl_->query_one(
      "SELECT count(*) FROM events WHERE sweep_id = ?1 AND kind = ?3 AND "
      "(trial_id = ?2 OR (?2 IS NULL AND trial_id IS NULL))",
      [](const store_detail::Statement& s) { return s.int64(0); }, sweep_id, trial_id, kind);
}

}  // namespace sweep
