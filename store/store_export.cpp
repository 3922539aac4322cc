/*
 * store_export.cpp — one row per trial for `sweep export` (CSV / JSON) and the report's table.
 *
 * The decision: the export is three single-pass queries inside one read snapshot (trials, the
 * final point of every series, the best value of the sweep metric per trial), joined in memory
 * by trial id, instead of one query per trial: 10,000 trials cost three statements, not 20,000.
 * "best" comes from the metrics table, not summary_json, so it exists for running trials too.
 */
#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <unordered_map>

#include "common/format.h"
#include "common/json.h"
#include "common/trial_score.h"
#include "store/store_impl.h"

namespace sweep {
namespace {

using store_detail::Connection;

struct ExportData {
  SweepRow sweep;
  std::vector<TrialRow> trials;
  std::unordered_map<std::int64_t, std::map<std::string, double>> final_values;  // trial -> name
  std::unordered_map<std::int64_t, double> best_values;                          // trial -> best
  std::set<std::string> param_names, series_names;
};

ExportData gather(Connection& conn, std::int64_t sweep_id) {
  return conn.read([&] {
    ExportData d;
    {
      auto s = conn.statement("SELECT " SWEEP_SWEEP_COLUMNS " FROM sweeps WHERE id = ?");
      s->bind_all(sweep_id);
      if (!s->step()) throw Error("no sweep with id " + std::to_string(sweep_id));
      d.sweep = store_detail::read_sweep(*s);
    }
    {
      auto s = conn.statement("SELECT " SWEEP_TRIAL_COLUMNS
                              " FROM trials WHERE sweep_id = ? ORDER BY number");
      s->bind_all(sweep_id);
      while (s->step()) {
        d.trials.push_back(store_detail::read_trial(*s));
        for (const auto& [name, value] : d.trials.back().params.items()) d.param_names.insert(name);
      }
    }
    {
      auto s = conn.statement(
          "SELECT m.trial_id, m.name, max(m.step), m.value, m.value_kind "
          "FROM trials t JOIN metrics m ON m.trial_id = t.id WHERE t.sweep_id = ? "
          "GROUP BY m.trial_id, m.name");
      s->bind_all(sweep_id);
      while (s->step()) {
        d.series_names.insert(s->text(1));
        d.final_values[s->int64(0)][s->text(1)] =
            store_detail::value_from(s->optional_real(3), s->text(4));
      }
    }
    {
      // Each trial's best by common/trial_score.h's rule, from its finite points.
      auto s = conn.statement(
          "SELECT m.trial_id, m.step, m.value FROM trials t JOIN metrics m ON m.trial_id = t.id "
          "WHERE t.sweep_id = ? AND m.name = ? AND m.value_kind = 'finite'");
      s->bind_all(sweep_id, d.sweep.metric_name);
      std::unordered_map<std::int64_t, TrialScore> scores;
      while (s->step()) scores[s->int64(0)].add(s->int64(1), s->real(2), d.sweep.metric_goal);
      for (const auto& [trial_id, score] : scores)
        if (score.best) d.best_values[trial_id] = *score.best;
    }
    return d;
  });
}

// Shortest text that reads back to the same double; "nan", "inf", "-inf" for the rest.
std::string optional_shortest(std::optional<double> v) { return v ? shortest(*v) : ""; }

std::string param_text(const sweep::Json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

sweep::Json number_json(double v) {
  return std::isfinite(v) ? sweep::Json(v) : sweep::Json(nullptr);
}
sweep::Json optional_json(std::optional<double> v) {
  return v ? sweep::Json(*v) : sweep::Json(nullptr);
}

std::optional<double> duration_of(const TrialRow& t) {
  if (!t.started_at || !t.finished_at) return std::nullopt;
  return *t.finished_at - *t.started_at;
}

}  // namespace

ExportTable Store::export_table(std::int64_t sweep_id) const {
  ExportData d = [&] {
    auto lock = impl_->lock_for_read();
    return gather(impl_->conn, sweep_id);
  }();
  ExportTable table;
  table.header = {"number", "state", "device"};
  for (const auto& p : d.param_names) table.header.push_back(p);
  table.header.push_back("best_" + d.sweep.metric_name);
  for (const auto& n : d.series_names) table.header.push_back("final_" + n);
  for (const char* c :
       {"attempts", "started_at", "finished_at", "duration_s", "stop_reason", "error"})
    table.header.push_back(c);

  for (const auto& t : d.trials) {
    std::vector<std::string> row;
    std::vector<bool> number;
    const auto cell = [&](std::string text, bool is_number) {
      row.push_back(std::move(text));
      number.push_back(is_number && !row.back().empty());
    };
    cell(std::to_string(t.number), true);
    cell(std::string(to_string(t.state)), false);
    cell(t.device, false);
    for (const auto& p : d.param_names) {
      const bool has = t.params.contains(p);
      cell(has ? param_text(t.params.at(p)) : "", has && t.params.at(p).is_number());
    }
    const auto best = d.best_values.find(t.id);
    cell(best == d.best_values.end() ? "" : shortest(best->second), true);
    const auto finals = d.final_values.find(t.id);
    for (const auto& n : d.series_names) {
      const bool has = finals != d.final_values.end() && finals->second.contains(n);
      cell(has ? shortest(finals->second.at(n)) : "", true);
    }
    cell(std::to_string(t.attempts), true);
    cell(optional_shortest(t.started_at), true);
    cell(optional_shortest(t.finished_at), true);
    cell(optional_shortest(duration_of(t)), true);
    cell(t.stop_reason, false);
    cell(t.error, false);
    table.rows.push_back(std::move(row));
    table.number.push_back(std::move(number));
  }
  return table;
}

sweep::Json Store::export_json(std::int64_t sweep_id) const {
  ExportData d = [&] {
    auto lock = impl_->lock_for_read();
    return gather(impl_->conn, sweep_id);
  }();
  sweep::Json trials = sweep::Json::array();
  for (const auto& t : d.trials) {
    sweep::Json best = sweep::Json::object();
    if (const auto it = d.best_values.find(t.id); it != d.best_values.end())
      best[d.sweep.metric_name] = number_json(it->second);
    sweep::Json finals = sweep::Json::object();
    if (const auto it = d.final_values.find(t.id); it != d.final_values.end())
      for (const auto& [name, value] : it->second) finals[name] = number_json(value);
    trials.push_back({{"number", t.number},
                      {"state", to_string(t.state)},
                      {"device", t.device},
                      {"params", t.params},
                      {"seed", t.seed},
                      {"repeat", t.repeat},
                      {"best", best},
                      {"final", finals},
                      {"summary", t.summary},
                      {"attempts", t.attempts},
                      {"queued_at", t.queued_at},
                      {"started_at", optional_json(t.started_at)},
                      {"finished_at", optional_json(t.finished_at)},
                      {"duration_s", optional_json(duration_of(t))},
                      {"stop_reason", t.stop_reason},
                      {"error", t.error},
                      {"checkpoint_path", t.checkpoint_path},
                      {"log_path", t.log_path}});
  }
  const auto& s = d.sweep;
  return {{"sweep",
           {{"id", s.id},
            {"name", s.name},
            {"state", to_string(s.state)},
            {"metric", {{"name", s.metric_name}, {"goal", to_string(s.metric_goal)}}},
            {"devices", s.devices},
            {"config_path", s.config_path},
            {"created_at", s.created_at},
            {"started_at", optional_json(s.started_at)},
            {"finished_at", optional_json(s.finished_at)}}},
          {"trials", trials}};
}

}  // namespace sweep
