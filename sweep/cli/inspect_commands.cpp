/*
 * inspect_commands.cpp — `sweep list | show | best | export`: read-only views of the store.
 *
 * The database is opened read-only, so these never block (or are blocked by) a running sweep
 * writing to the same file: SQLite's WAL lets readers see the last committed state.
 */
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/json.h"
#include "common/trial_score.h"
#include "store/store.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/csv_table.h"
#include "sweep/cli/output_file.h"
#include "sweep/cli/sweep_argument.h"
#include "sweep/cli/text_table.h"
#include "sweep/config/expand.h"
#include "sweep/run/run_sweep.h"
#include "sweep/run/sweep_lock.h"

namespace sweep::cli {

namespace fs = std::filesystem;

namespace {

struct Where {
  std::string name;
  std::string out_dir = "runs";
  std::string db_path;
  std::string format = "csv";
  std::string output;
  bool raw = false;    // export: CSV cells as they are, no formula guard
  bool force = false;  // export: write -o even over a database
};

void add_where_options(CLI::App& command, Where& where, bool with_name) {
  if (with_name)
    command.add_option("NAME", where.name, "The sweep's name, or its directory (runs/NAME)")
        ->required();
  command.add_option("--out", where.out_dir, "Directory of runs (default: runs)")->type_name("DIR");
  command.add_option("--db", where.db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
}

// The store of the sweep `where` names (its name's, when a directory named it: sweep_place).
Store open_store(Where& where) {
  if (!where.name.empty()) {
    const SweepPlace place = sweep_place(where.name, where.out_dir);
    where.out_dir = place.out_dir, where.name = place.name;
  }
  const fs::path path = where.db_path.empty() ? run::default_db_path(where.out_dir, where.name)
                                              : fs::path(where.db_path);
  if (!fs::exists(path))
    throw Error("no sweep database at " + path.string() +
                (where.db_path.empty() ? " (give --out DIR or --db PATH)" : ""));
  StoreOptions options;
  options.read_only = true;
  return Store(path, options);
}

// A sweep's state as stored, unless it says `running` while no process holds the sweep's lock:
// its process ended without stopping it (SIGKILL, the OOM killer, a lost machine), which the
// store cannot know. (show and list said `running` for good after a crash.)
bool orphaned(const SweepRow& sweep, const Store& store) {
  return sweep.state == SweepState::running &&
         run::SweepLock::held(store.path().parent_path()) == std::optional<bool>(false);
}

std::string shown_state(const SweepRow& sweep, const Store& store) {
  const std::string state(to_string(sweep.state));
  return orphaned(sweep, store) ? state + ", but no process runs it" : state;
}

// One row per sweep of `store`: name, state, trials, trials by state, database.
void add_sweep_rows(const Store& store, std::vector<std::vector<std::string>>& rows) {
  for (const SweepSummary& s : store.list_sweeps()) {
    std::string states;
    for (const auto& [state, count] : s.trials_by_state)
      states += (states.empty() ? "" : ", ") + std::to_string(count) + " " +
                std::string(to_string(state));
    rows.push_back({s.sweep.name, shown_state(s.sweep, store), std::to_string(s.trial_count),
                    states.empty() ? "-" : states, store.path().string()});
  }
}

// The best finite value of the sweep's metric per trial id (common/trial_score.h).
std::map<std::int64_t, double> best_by_trial(const Store& store, const SweepRow& sweep) {
  std::map<std::int64_t, TrialScore> scores;
  for (const MetricPoint& p : store.metrics(sweep.id))
    if (p.name == sweep.metric_name) scores[p.trial_id].add(p.step, p.value, sweep.metric_goal);
  std::map<std::int64_t, double> best;
  for (const auto& [trial_id, score] : scores)
    if (score.best) best[trial_id] = *score.best;
  return best;
}

// What `sweep show` says about a trial beside its numbers: why it waits, stopped or failed.
std::string show_note(const TrialRow& t) {
  std::string note;
  auto add = [&note](const std::string& text) { note += (note.empty() ? "" : "; ") + text; };
  if (!t.wait_reason.empty() && t.state == TrialState::queued) add("waiting: " + t.wait_reason);
  if (!t.stop_reason.empty()) add(t.stop_reason);
  if (!t.error.empty()) add("error: " + t.error);
  return note;
}

// "epoch 2 (step 64)" when the winning point carries an epoch, as the report says it; else
// "step 64".
std::string best_position(const Store& store, const BestTrial& winner, const std::string& metric) {
  const std::string step = "step " + std::to_string(winner.step);
  for (const MetricPoint& p : store.trial_metrics(winner.trial.id))
    if (p.name == metric && p.step == winner.step && p.epoch)
      return "epoch " + significant(*p.epoch) + " (" + step + ")";
  return step;
}

// Adds each trial's metric history to `exported` (Store::export_json): "history", every point of
// every series in the store's order, {"name", "step", "epoch", "value"}; an unknown epoch and a
// NaN or infinite value are null, as elsewhere in the export.
Json with_history(const Store& store, const SweepRow& sweep, Json exported) {
  std::map<std::int64_t, std::int64_t> number_of;  // trial id -> number
  for (const TrialRow& t : store.trials(sweep.id)) number_of[t.id] = t.number;
  std::map<std::int64_t, Json> history;  // trial number -> points
  for (const MetricPoint& p : store.metrics(sweep.id)) {
    Json& points = history[number_of[p.trial_id]];
    if (points.is_null()) points = Json::array();
    points.push_back({{"name", p.name},
                      {"step", p.step},
                      {"epoch", p.epoch ? Json(*p.epoch) : Json(nullptr)},
                      {"value", std::isfinite(p.value) ? Json(p.value) : Json(nullptr)}});
  }
  for (Json& trial : exported.at("trials")) {
    const auto it = history.find(trial.at("number").get<std::int64_t>());
    trial["history"] = it == history.end() ? Json::array() : std::move(it->second);
  }
  return exported;
}

}  // namespace

void add_inspect_commands(CLI::App& app, int& exit_code) {
  auto list_args = std::make_shared<Where>();
  CLI::App* list = app.add_subcommand("list", "List the sweeps under runs/ (or in one database)");
  add_where_options(*list, *list_args, false);
  list->footer(
      "Examples:\n  sweep list\n  sweep list --out /data/runs\n  sweep list --db "
      "runs/quickstart/sweep.db");
  list->callback([list_args, &exit_code] {
    std::vector<fs::path> databases;
    if (!list_args->db_path.empty()) {
      databases.emplace_back(list_args->db_path);
    } else if (fs::is_directory(list_args->out_dir)) {
      for (const auto& entry : fs::directory_iterator(list_args->out_dir))
        if (fs::exists(entry.path() / "sweep.db")) databases.push_back(entry.path() / "sweep.db");
      std::sort(databases.begin(), databases.end());
    }
    if (databases.empty()) std::cout << "no sweeps under " << list_args->out_dir << "/\n";
    std::vector<std::vector<std::string>> rows = {
        {"NAME", "STATE", "TRIALS", "BY STATE", "DATABASE"}};
    for (const fs::path& path : databases) {
      Where where;
      where.db_path = path.string();
      add_sweep_rows(open_store(where), rows);
    }
    if (rows.size() > 1) print_table(std::cout, rows);
    exit_code = kExitOk;
  });

  auto show_args = std::make_shared<Where>();
  CLI::App* show =
      app.add_subcommand("show", "Show a sweep's trials: state, device, parameters, metric, why");
  add_where_options(*show, *show_args, true);
  show->footer("Example:\n  sweep show quickstart");
  show->callback([show_args, &exit_code] {
    const Store store = open_store(*show_args);
    const SweepRow sweep = store.sweep_named(show_args->name);
    std::cout << "sweep " << printable(sweep.name) << " (" << shown_state(sweep, store)
              << "), metric " << printable(sweep.metric_name) << " ("
              << to_string(sweep.metric_goal) << "), devices " << sweep.devices << "\n";
    if (orphaned(sweep, store))
      std::cout << "note: its process ended without stopping it (killed, or its machine lost); "
                   "sweep resume "
                << printable(sweep.name) << " continues it\n";
    const std::map<std::int64_t, double> best = best_by_trial(store, sweep);
    const std::vector<TrialRow> trials = store.trials(sweep.id);
    std::vector<const Json*> params;
    for (const TrialRow& t : trials) params.push_back(&t.params);
    const ParamDigits digits = table_digits(params);
    std::vector<std::vector<std::string>> rows = {
        {"TRIAL", "STATE", "DEVICE", "PARAMS", "BEST " + sweep.metric_name, "NOTE"}};
    for (const TrialRow& t : trials) {
      const auto b = best.find(t.id);
      rows.push_back({std::to_string(t.number), std::string(to_string(t.state)),
                      t.device.empty() ? "-" : t.device,
                      params_text(t.params, ParamNames::last_parts, digits),
                      b == best.end() ? "-" : significant(b->second), show_note(t)});
    }
    print_table(std::cout, rows);
    exit_code = kExitOk;
  });

  auto best_args = std::make_shared<Where>();
  CLI::App* best = app.add_subcommand("best", "Print the best trial of a sweep and its config");
  add_where_options(*best, *best_args, true);
  best->footer("Example:\n  sweep best quickstart");
  best->callback([best_args, &exit_code] {
    const Store store = open_store(*best_args);
    const SweepRow sweep = store.sweep_named(best_args->name);
    const std::optional<BestTrial> winner = store.best_trial(sweep.id);
    if (!winner) {
      std::cout << "no trial of " << sweep.name << " reported " << sweep.metric_name << " yet\n";
      exit_code = kExitFailure;
      return;
    }
    // Only broken trials have a value (Store::best_trial ranks them last): no result to copy.
    // Their best is shown as what it is, and the exit status says that there is no best trial.
    if (is_broken(winner->trial.state)) {
      std::cout << "no successful trial of " << printable(sweep.name)
                << ": every trial that reported " << printable(sweep.metric_name)
                << " failed or diverged\n"
                << "best value of a broken trial: trial " << winner->trial.number << " ("
                << to_string(winner->trial.state) << "), " << printable(sweep.metric_name) << " "
                << significant(winner->value) << " at "
                << best_position(store, *winner, sweep.metric_name) << "\n";
      if (!winner->trial.error.empty())
        std::cout << "its error: " << printable(winner->trial.error) << "\n";
      exit_code = kExitFailure;
      return;
    }
    std::cout << "trial " << winner->trial.number << ": " << sweep.metric_name << " "
              << significant(winner->value) << " at "
              << best_position(store, *winner, sweep.metric_name) << " ("
              << to_string(winner->trial.state)
              << ")\n"
              // Parameters exactly, as the config below has them: this is what to copy.
              << "params: " << printable(params_text(winner->trial.params)) << "\n"
              << "config:\n"
              << winner->trial.config_yaml;
    exit_code = kExitOk;
  });

  auto export_args = std::make_shared<Where>();
  CLI::App* exporter = app.add_subcommand("export", "Export a sweep's trials as CSV or JSON");
  add_where_options(*exporter, *export_args, true);
  exporter
      ->add_option("--format", export_args->format,
                   "csv (one row per trial) or json (everything, each trial's metric history too)")
      ->check(CLI::IsMember({"csv", "json"}));
  exporter
      ->add_option("-o,--output", export_args->output,
                   "File to write (default, or -: standard output); never over a database")
      ->type_name("FILE")
      ->check(CLI::Validator(output_path_problem, "FILE"));
  exporter->add_flag("--raw", export_args->raw,
                     "CSV cells exactly as stored: no ' before text that starts with = + - @ "
                     "(which a spreadsheet would run as a formula)");
  exporter->add_flag("--force", export_args->force,
                     "Write -o FILE even when it is an SQLite database or one's -wal/-shm file");
  exporter->footer(
      "Text cells that a spreadsheet would run as a formula (starting with = + - @, a tab or a\n"
      "carriage return) get a leading ' in CSV, as OWASP advises; numbers are written as they "
      "are.\n"
      "Examples:\n  sweep export quickstart --format csv -o quickstart.csv\n"
      "  sweep export quickstart --format json | python3 -m json.tool");
  exporter->callback([export_args, &exit_code] {
    const Store store = open_store(*export_args);
    const SweepRow sweep = store.sweep_named(export_args->name);
    // Before anything is read or written: -o runs/NAME/sweep.db destroyed the sweep.
    const std::string& output = export_args->output;
    if (!output.empty()) refuse_database_output(output, store.path(), export_args->force);
    const std::string text =
        export_args->format == "json"
            ? json_text(with_history(store, sweep, store.export_json(sweep.id)), 2) + "\n"
            : csv_table(store.export_table(sweep.id), {.raw = export_args->raw});
    // A file is written all of it or none: a full disk leaves it as it was, not a cut table.
    if (write_output(output.empty() ? std::string(kStandardOutput) : output, text))
      std::cerr << "wrote " << output << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
