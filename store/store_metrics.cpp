/*
 * store_metrics.cpp — metric series: idempotent upserts and the report's one-pass reads.
 *
 * The decision: every read here is a single SQL statement whose order comes from an index
 * (trials by (sweep_id, number), metrics clustered by (trial_id, name, step)), so the report over
 * 1,000 trials x 100 epochs is one sequential pass with no sort and no query per trial. The best
 * trial is picked from such a pass in C++ by common/trial_score.h's rule (no second rule in SQL).
 */
#include <cmath>
#include <limits>

#include "common/trial_score.h"
#include "store/store_impl.h"

namespace sweep {
namespace store_detail {

std::string_view value_kind_of(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return "finite";
}

double value_from(std::optional<double> stored, std::string_view kind) {
  if (kind == "finite" && stored) return *stored;
  if (kind == "inf") return std::numeric_limits<double>::infinity();
  if (kind == "-inf") return -std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

MetricPoint read_metric(const Statement& s, int c) {
  MetricPoint p;
  p.trial_id = s.int64(c + 0);
  p.name = s.text(c + 1);
  p.step = s.int64(c + 2);
  p.epoch = s.optional_real(c + 3);
  p.value = value_from(s.optional_real(c + 4), s.text(c + 5));
  p.wall_time = s.real(c + 6);
  return p;
}

}  // namespace store_detail

void Store::log_metrics(std::span<const MetricPoint> points) {
  if (points.empty()) return;
  for (const auto& p : points)
    if (p.name.empty())
      throw Error("a metric point of trial " + std::to_string(p.trial_id) + " has no name");
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  conn.write([&] {
    auto s =
        conn.statement("INSERT INTO metrics (" SWEEP_METRIC_COLUMNS
                       ") VALUES (?, ?, ?, ?, ?, ?, ?) "
                       "ON CONFLICT (trial_id, name, step) DO UPDATE SET epoch = excluded.epoch, "
                       "value = excluded.value, value_kind = excluded.value_kind, "
                       "wall_time = excluded.wall_time");
    for (const auto& p : points) {
      const auto kind = store_detail::value_kind_of(p.value);
      const std::optional<double> value =
          kind == "finite" ? std::optional<double>(p.value) : std::nullopt;
      s->bind_all(p.trial_id, p.name, p.step, p.epoch, value, kind, p.wall_time).step();
      s->reset();
    }
  });
}

namespace {
// Every finite point of a sweep's metric (?1 the sweep, ?2 the metric) with its trial's number and
// state, trial by trial in step order (the indexes give that order: no sort). The winner is picked
// in C++ by common/trial_score.h's rule, the one the report, the search feed and the console use.
constexpr const char* kMetricPointsByTrialSql =
    "SELECT t.id, t.number, t.state, m.step, m.value, m.epoch "
    "FROM trials t JOIN metrics m ON m.trial_id = t.id "
    "WHERE t.sweep_id = ?1 AND m.name = ?2 AND m.value_kind = 'finite' "
    "ORDER BY t.number, m.step";

constexpr const char* kSweepMetricsSql =
    "SELECT m.trial_id, m.name, m.step, m.epoch, m.value, m.value_kind, m.wall_time "
    "FROM trials t JOIN metrics m ON m.trial_id = t.id "
    "WHERE t.sweep_id = ? ORDER BY t.number, m.name, m.step";
}  // namespace

void Store::for_each_metric(std::int64_t sweep_id,
                            const std::function<void(const MetricPoint&)>& visit) const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  conn.read([&] {
    auto s = conn.statement(kSweepMetricsSql);
    s->bind_all(sweep_id);
    bool visited_any = false;
    try {
      while (s->step()) {
        visit(store_detail::read_metric(*s));
        visited_any = true;
      }
    } catch (const store_detail::DatabaseBusy& e) {
      // A WAL reader only meets "busy" while taking its snapshot, before the first row; should
      // it happen later, a retry would show the visitor some points twice, so fail instead.
      if (visited_any)
        throw Error("reading metrics from " + conn.path().string() +
                    " was interrupted: " + e.what());
      throw;
    }
  });
}

std::vector<MetricPoint> Store::metrics(std::int64_t sweep_id) const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  return conn.read([&] {
    std::vector<MetricPoint> out;
    auto s = conn.statement(kSweepMetricsSql);
    s->bind_all(sweep_id);
    while (s->step()) out.push_back(store_detail::read_metric(*s));
    return out;
  });
}

std::vector<MetricPoint> Store::trial_metrics(std::int64_t trial_id) const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  return conn.read([&] {
    std::vector<MetricPoint> out;
    auto s = conn.statement("SELECT " SWEEP_METRIC_COLUMNS
                            " FROM metrics WHERE trial_id = ? ORDER BY name, step");
    s->bind_all(trial_id);
    while (s->step()) out.push_back(store_detail::read_metric(*s));
    return out;
  });
}

std::vector<MetricPoint> Store::latest_metrics(std::int64_t sweep_id) const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  return conn.read([&] {
    std::vector<MetricPoint> out;
    // SQLite guarantees that with a single max() aggregate, the bare columns come from the row
    // holding the maximum: one pass, no self-join.
    auto s = conn.statement(
        "SELECT m.trial_id, m.name, max(m.step), m.epoch, m.value, m.value_kind, m.wall_time "
        "FROM trials t JOIN metrics m ON m.trial_id = t.id WHERE t.sweep_id = ? "
        "GROUP BY t.number, m.name ORDER BY t.number, m.name");
    s->bind_all(sweep_id);
    while (s->step()) out.push_back(store_detail::read_metric(*s));
    return out;
  });
}

std::optional<BestTrial> Store::best_trial(std::int64_t sweep_id) const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  return conn.read([&]() -> std::optional<BestTrial> {
    std::string metric_name;
    MetricGoal goal = MetricGoal::maximize;
    {
      auto s = conn.statement("SELECT metric_name, metric_goal FROM sweeps WHERE id = ?");
      s->bind_all(sweep_id);
      if (!s->step()) throw Error("no sweep with id " + std::to_string(sweep_id));
      metric_name = s->text(0);
      goal = s->text(1) == "maximize" ? MetricGoal::maximize : MetricGoal::minimize;
    }
    // Each trial is ranked once all its points are in, against the winner so far.
    std::optional<std::int64_t> winner_id;
    RankedTrial winner;
    std::int64_t id = 0;  // the trial being read (SQLite's ids start at 1)
    std::int64_t number = 0;
    TrialState state = TrialState::queued;
    TrialScore score;
    const auto rank_current = [&] {
      const RankedTrial entry = ranked(score, number, state);
      if (entry.best && (!winner_id || ranks_before(entry, winner, goal))) {
        winner_id = id;
        winner = entry;
      }
    };
    auto s = conn.statement(kMetricPointsByTrialSql);
    s->bind_all(sweep_id, metric_name);
    while (s->step()) {
      if (s->int64(0) != id) {
        if (id != 0) rank_current();
        id = s->int64(0);
        number = s->int64(1);
        state = parse_trial_state(s->text(2)).value_or(TrialState::queued);
        score = TrialScore{};
      }
      score.add(s->int64(3), s->real(4), goal, s->optional_real(5));
    }
    if (id != 0) rank_current();
    if (!winner_id) return std::nullopt;
    auto t = conn.statement("SELECT " SWEEP_TRIAL_COLUMNS " FROM trials WHERE id = ?");
    t->bind_all(*winner_id);
    if (!t->step()) throw Error("trial " + std::to_string(*winner_id) + " vanished mid-read");
    return BestTrial{store_detail::read_trial(*t), *winner.best, winner.best_step};
  });
}

}  // namespace sweep
