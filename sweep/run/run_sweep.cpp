/*
 * run_sweep.cpp — glue: config → store rows → executor → progress → summary and report.
 *
 * The run loop stays on the caller's thread: it polls for finished trials a few times a second,
 * which is also when it redraws the live table, notices Ctrl-C (the signal handler only counts)
 * and a reached metric.target. Every trial thread only reports; nothing waits on the console.
 */
#include "sweep/run/run_sweep.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cluster/coordinator.h"
#include "common/format.h"
#include "common/json.h"
#include "reports/report.h"
#include "scheduler/executor.h"
#include "scheduler/futures.h"
#include "scheduler/process_tree.h"
#include "scheduler/stopping/stopping_policy.h"
#include "store/store.h"
#include "sweep/config/config_error.h"
#include "sweep/config/expand.h"
#include "sweep/run/cluster_devices.h"
#include "sweep/run/command_environment.h"
#include "sweep/run/console_progress.h"
#include "sweep/run/devices.h"
#include "sweep/run/fused_arrays.h"
#include "sweep/run/planned_trials.h"
#include "sweep/run/progress_table.h"
#include "sweep/run/search_feed.h"
#include "sweep/run/sigint.h"
#include "sweep/run/start_ahead.h"
#include "sweep/run/store_sink.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/sweep_lock.h"
#include "sweep/run/trainer_array.h"

namespace sweep::run {

namespace fs = std::filesystem;

namespace {

// How long a killed run's leftover trainer processes get to end on SIGTERM (a trial's own stop
// gives as long, CommandSpec::kill_grace_s's default).
constexpr double kLeftoverGraceS = 5;

void print_summary(std::ostream& out, const RunResult& result, const config::SweepConfig& config,
                   const std::string& out_dir, const std::vector<TrialRow>& rows) {
  out << "\nsweep " << result.name << ": ";
  bool first = true;
  for (const auto& [state, count] : result.states) {
    out << (first ? "" : ", ") << count << " " << to_string(state);
    first = false;
  }
  out << "\n";
  if (!result.cluster_failure.empty())
    out << "stopped: " << result.cluster_failure << "\nthen continue with  sweep resume "
        << result.name << (out_dir == "runs" ? "" : " --out " + out_dir) << "\n";
  else if (!result.store_failure.empty())
    out << "stopped: " << result.store_failure << "\nthen continue with  sweep resume "
        << result.name << (out_dir == "runs" ? "" : " --out " + out_dir) << "\n";
  else if (result.interrupted)
    out << "interrupted: continue with  sweep resume " << result.name
        << (out_dir == "runs" ? "" : " --out " + out_dir) << "\n";
  if (!result.target_reached_by.empty())
    out << "target " << config.sweep.metric.name << " reached by " << result.target_reached_by
        << ": the other trials were cancelled\n";
  if (result.best && is_broken(result.best->trial.state)) {
    // Every trial with a value broke (Store::best_trial ranks broken ones last): no best trial,
    // and its value is said as a broken trial's.
    out << "best: no successful trial (trial " << result.best->trial.number << " reached "
        << config.sweep.metric.name << " " << significant(result.best->value) << " before it "
        << to_string(result.best->trial.state) << ")\n";
  } else if (result.best) {
    // The best's values with the digits that tell the sweep's values apart (a random draw reads
    // 0.00316, not 0.0031622776601683794), as in the live table.
    std::vector<std::string> keys;
    for (const config::ParamSpec& p : config.sweep.space.params) keys.push_back(p.name);
    std::vector<const Json*> params;
    for (const TrialRow& row : rows) params.push_back(&row.params);
    const ParamDigits digits = param_digits(keys, params);
    out << "best: trial " << result.best->trial.number << ", " << config.sweep.metric.name << " "
        << significant(result.best->value)
        << in_parentheses(params_text(result.best->trial.params, ParamNames::last_parts, digits))
        << "\n";
  } else {
    out << "best: no trial reported " << config.sweep.metric.name << "\n";
  }
  out << "database: " << result.db_path.string() << "\n";
  if (!result.report_path.empty()) out << "report:   " << result.report_path.string() << "\n";
}

// The ids of the trials submitted so far (a tpe sweep adds them as it goes), for the cancel.
struct SubmittedIds {
  std::mutex mutex;
  std::vector<std::int64_t> ids;
};

// metric.target: the first trial to reach it ends the sweep. The callback cancels the others at
// once, from the reporting trial's thread (the executor allows it), so no other trial starts
// after the target was reached; `reached_by` records which trial it was.

scheduler::TrialCallbacks watch_target(const config::MetricSpec& metric,
                                       scheduler::Executor& executor, SubmittedIds& submitted,
                                       const scheduler::TrialSpec& spec,
                                       std::atomic<std::int64_t>& reached_by) {
  scheduler::TrialCallbacks callbacks;
  if (!metric.target) return callbacks;
  callbacks.on_metric = [&reached_by, &metric, &executor, &submitted, number = spec.number,
                         id = spec.id](const scheduler::MetricPoint& p) {
    if (p.name != metric.name || !std::isfinite(p.value)) return;
    const bool reached = metric.maximize() ? p.value >= *metric.target : p.value <= *metric.target;
    std::int64_t none = -1;
    if (!reached || !reached_by.compare_exchange_strong(none, number)) return;
    std::lock_guard lock(submitted.mutex);
    for (std::int64_t other : submitted.ids)
      if (other != id) executor.cancel(other);
  };
  return callbacks;
}

// A search that learns (tpe) sees every metric its trial reports, beside the target's watch.
scheduler::TrialCallbacks with_feed(scheduler::TrialCallbacks callbacks, SearchFeed* feed,
                                    std::int64_t number) {
  if (!feed) return callbacks;
  callbacks.on_metric = [feed, number,
                         watch = std::move(callbacks.on_metric)](const scheduler::MetricPoint& p) {
    feed->on_metric(number, p);
    if (watch) watch(p);
  };
  return callbacks;
}

// Asks for trials as slots free (at most as many in flight as the executor has slots), then polls
// a few times a second until all have ended: finished trials, the live table, Ctrl-C (the signal
// handler only counts), a stop from another thread, a store that cannot be written any more, a
// reached target. A trial never asked for stays queued in the store for `sweep resume`, or is
// cancelled when the target was reached. The loop asks: the next planned trial of a grid or a
// random search, or, for a search that learns (`feed`), a new trial made from its suggestion when
// the planned ones have run out; every ended trial is told to the feed.
//
// What the loop submits are units: a fused array (several trials trained as one on one slot,
// fused_arrays.h) or one trial; `units` holds indices into planned.specs, and at most as many
// units are in flight as the executor has slots.
void run_loop(const Execution& x, PlannedTrials& planned,
              std::vector<std::vector<std::size_t>> units, SearchFeed* feed,
              const DevicePlan& devices, scheduler::Executor& executor, ConsoleProgress& console,
              StoreSink& store, RunResult& result) {
  const auto& metric = x.config->sweep.metric;
  std::optional<SigintGuard> sigint;
  if (x.options.handle_sigint) sigint.emplace();

  std::atomic<std::int64_t> reached_by{-1};
  SubmittedIds submitted;
  std::vector<scheduler::TrialFuture> futures;
  std::vector<std::size_t> spec_of;  // by future: its index in planned.specs
  std::vector<std::size_t> unit_of;  // by future: its unit
  std::vector<std::size_t> left;     // by unit: members not ended yet
  std::vector<bool> was_submitted(planned.specs.size(), false);
  const std::size_t capacity = executor.slots().size();
  std::size_t next_unit = 0, in_flight = 0, done = 0;
  bool stop_asking = false, interrupt_sent = false, target_handled = false;
  auto callbacks_for = [&](const scheduler::TrialSpec& spec) {
    {
      std::lock_guard lock(submitted.mutex);
      submitted.ids.push_back(spec.id);
    }
    return with_feed(watch_target(metric, executor, submitted, spec, reached_by), feed,
                     spec.number);
  };
  auto submit = [&](const std::vector<std::size_t>& unit) {
    const std::size_t u = left.size();
    left.push_back(unit.size());
    for (std::size_t i : unit) {
      spec_of.push_back(i);
      unit_of.push_back(u);
      was_submitted.resize(planned.specs.size(), false);
      was_submitted[i] = true;
    }
    if (unit.size() == 1) {
      const scheduler::TrialSpec& spec = planned.specs[unit.front()];
      futures.push_back(executor.submit(spec, planned.fns[unit.front()], callbacks_for(spec)));
      return;
    }
    std::vector<scheduler::TrialSpec> specs;
    std::vector<scheduler::TrialCallbacks> callbacks;
    std::map<std::int64_t, TrainerTrialInput> inputs;
    for (std::size_t i : unit) {
      const scheduler::TrialSpec& spec = planned.specs[i];
      specs.push_back(spec);
      callbacks.push_back(callbacks_for(spec));
      inputs.emplace(spec.id, planned.trainer_inputs.at(spec.id));
    }
    for (scheduler::TrialFuture& f : executor.submit_array(
             std::move(specs), make_trainer_array(std::move(inputs)), std::move(callbacks)))
      futures.push_back(std::move(f));
  };
  auto ask = [&] {
    while (!stop_asking && in_flight < capacity) {
      if (next_unit == units.size()) {
        const std::optional<TrialRow> row = feed ? feed->next() : std::nullopt;
        if (!row) break;
        plan_trials(x, {*row}, false, devices, planned);
        store.add_paths(row->id, planned.paths.at(row->id));
        units.push_back({planned.specs.size() - 1});
      }
      submit(units[next_unit]);
      ++next_unit;
      ++in_flight;
    }
  };
  auto tell = [&](std::size_t index) {
    if (--left[unit_of[index]] == 0) --in_flight;
    if (feed) feed->finished(planned.specs[spec_of[index]].number, futures[index].outcome().state);
  };
  auto interrupt = [&](const std::string& note, const std::string& reason) {
    stop_asking = true;
    if (interrupt_sent) return;
    interrupt_sent = true;
    console.note(note);
    executor.interrupt(reason);
  };
  ask();
  while (done < futures.size()) {
    if (const auto index = scheduler::fetch_next(futures, std::chrono::milliseconds(250))) {
      ++done;
      tell(*index);
    }
    if (sigint && SigintGuard::count() > 0) {
      const std::string by = SigintGuard::first_signal_name();
      result.interrupted_by = SigintGuard::first_signal();
      interrupt(
          by + ": stopping; running trials save a checkpoint (" + by + " again quits at once)",
          "interrupted by " + by);
    }
    if (const std::string broken = store.failure(); !broken.empty())
      interrupt("the sweep database cannot be written, so no further trial starts: " + broken,
                "the sweep database cannot be written");
    if (x.options.cluster)
      if (const std::string lost = x.options.cluster->lost(); !lost.empty()) {
        result.cluster_failure = lost;
        interrupt(lost + ": stopping the sweep (running trials save a checkpoint)", lost);
      }
    if (x.options.stop && x.options.stop->load())
      interrupt(x.options.stop_reason + ": running trials save a checkpoint and stop",
                x.options.stop_reason);
    if (reached_by.load() >= 0 && !target_handled) {
      target_handled = true;
      stop_asking = true;
      result.target_reached_by = "trial " + std::to_string(reached_by.load());
      console.note("target " + metric.name + " reached by " + result.target_reached_by +
                   ": the other trials are cancelled");
    }
    ask();
    console.redraw();
  }
  console.clear();
  result.interrupted = executor.interrupted();
  result.store_failure = store.failure();
  if (target_handled) {
    const std::string reason = "target " + metric.name + " reached by " + result.target_reached_by;
    for (std::size_t i = 0; i < planned.specs.size(); ++i) {
      if (i < was_submitted.size() && was_submitted[i]) continue;
      TrialUpdate update;
      update.stop_reason = reason;
      x.store.set_trial_state(planned.specs[i].id, TrialState::cancelled, update);
    }
  }
}

// What the live table needs to know beyond the trials' events: the sweep, the trials of it this
// run does not run (a resumed sweep's finished ones) and the best of those, the terminal's size.
ConsoleSetup console_setup(const Execution& x, const PlannedTrials& planned,
                           std::size_t trial_total, bool live) {
  ConsoleSetup setup;
  setup.live = live;
  setup.sweep_name = x.config->name;
  setup.metric_name = x.config->sweep.metric.name;
  setup.maximize = x.config->sweep.metric.maximize();
  setup.to_run = trial_total;
  for (const config::ParamSpec& p : x.config->sweep.space.params)
    setup.param_keys.push_back(p.name);
  setup.params = planned.params;
  if (!live) return setup;
  for (const TrialRow& row : x.store.trials(x.sweep.id))
    if (!planned.paths.count(row.id)) ++setup.earlier[row.state];
  if (const auto best = x.store.best_trial(x.sweep.id))
    setup.best = BestSoFar{best->trial.number, best->value, best->trial.params, best->step,
                           is_broken(best->trial.state)};
  setup.terminal_size = [] { return terminal_size(STDOUT_FILENO); };
  return setup;
}

// An array's members must be local trainer trials of one GPU each (a swept gpus_per_trial may
// make some trials multi-GPU): any other member runs alone.
std::vector<std::vector<std::size_t>> only_fusible(std::vector<std::vector<std::size_t>> units,
                                                   const PlannedTrials& planned) {
  std::vector<std::vector<std::size_t>> out;
  for (auto& unit : units) {
    if (unit.size() == 1) {
      out.push_back(std::move(unit));
      continue;
    }
    std::vector<std::size_t> kept;
    for (std::size_t i : unit) {
      const scheduler::TrialSpec& spec = planned.specs[i];
      if (spec.gpus == 1 && planned.trainer_inputs.count(spec.id))
        kept.push_back(i);
      else
        out.push_back({i});
    }
    if (kept.size() == 1)
      out.push_back(kept);
    else if (!kept.empty())
      out.push_back(std::move(kept));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });
  return out;
}

RunResult execute(const Execution& x, const std::vector<TrialRow>& to_run, bool resume) {
  std::ostream& out = x.options.out ? *x.options.out : std::cout;
  const bool live = x.options.live.value_or(::isatty(STDOUT_FILENO) == 1 && !x.options.out);
  const config::SweepConfig& config = *x.config;

  cluster::Coordinator* cluster = x.options.cluster;
  DevicePlan devices = cluster ? plan_cluster_devices(config.resources, cluster->ranks(),
                                                      cluster->options().coordinator_runs_trials)
                               : plan_local_devices(config.resources);
  PlannedTrials planned;
  plan_trials(x, to_run, resume, devices, planned);
  const FuseContext fuse_context = fusion_context(devices, cluster != nullptr);
  std::vector<std::vector<std::size_t>> units = fuse_trials(config, planned.points, fuse_context);
  units = only_fusible(std::move(units), planned);
  const bool fused =
      std::any_of(units.begin(), units.end(), [](const auto& u) { return u.size() > 1; });
  // A search that learns makes its trials as slots free, after the stored ones left to run.
  std::optional<SearchFeed> feed;
  if (trials_made_as_asked(config)) feed.emplace(x.store, x.sweep.id, config);
  const std::size_t trial_total = planned.specs.size() + (feed ? feed->remaining() : 0);

  auto store_sink = std::make_shared<StoreSink>(x.store, x.sweep.id, x.run_dir, planned.paths);
  auto console =
      std::make_shared<ConsoleProgress>(out, console_setup(x, planned, trial_total, live));
  const ConsoleNotices::Attached notices(*x.notices, *console);
  std::shared_ptr<scheduler::StoppingPolicy> policy;
  if (config.sweep.early_terminate)
    policy = scheduler::make_stopping_policy(
        config.sweep.early_terminate->policy, config.sweep.metric.name,
        config.sweep.metric.maximize() ? scheduler::MetricGoal::maximize
                                       : scheduler::MetricGoal::minimize);

  console->note((resume ? "resuming " : "running ") + config.name + ": " +
                std::to_string(trial_total) + (trial_total == 1 ? " trial" : " trials") +
                (feed ? " (" + config.sweep.method + ": each made when a slot frees)" : "") +
                " on " + devices.description +
                (fused ? ", " + describe_fusion(config, units, fuse_context) : std::string()) +
                (policy ? ", early stopping: " + policy->describe() : std::string()));

  x.store.set_sweep_state(x.sweep.id, SweepState::running);
  RunResult result;
  {
    if (cluster)
      cluster->open(devices.executor.devices, devices.executor.cpu_slots,
                    devices.executor.trials_per_gpu);
    scheduler::Executor executor(devices.executor, {store_sink, console}, policy);
    run_loop(x, planned, std::move(units), feed ? &*feed : nullptr, devices, executor, *console,
             *store_sink, result);
    executor.shutdown();
    if (cluster) cluster->close();
  }
  store_sink->flush();
  x.store.set_sweep_state(x.sweep.id,
                          result.interrupted ? SweepState::interrupted : SweepState::completed);

  result.name = config.name;
  result.sweep_id = x.sweep.id;
  result.run_dir = x.run_dir;
  result.db_path = x.store.path();
  result.trials_run = static_cast<int>(planned.specs.size());
  const std::vector<TrialRow> rows = x.store.trials(x.sweep.id);
  for (const TrialRow& row : rows) ++result.states[row.state];
  result.best = x.store.best_trial(x.sweep.id);
  if (x.options.write_report) {
    const fs::path report = report_in(x.run_dir);
    try {
      reports::write_own_report(x.store, config.name, report);
      result.report_path = report;
    } catch (const std::exception& e) {
      out << "warning: the report could not be written: " << e.what() << "\n";
    }
  }
  // Through the console, which breaks lines to a terminal's width.
  std::ostringstream summary;
  print_summary(summary, result, config, x.out_dir, rows);
  console->note(summary.str());
  return result;
}

// The sweep's stored config with a resume's --set applied. Data that is not where the config says
// any more (the sweep copied to another machine, the data moved) gets the way out said.
config::SweepConfig stored_config(const SweepRow& sweep, const std::string& name,
                                  const std::vector<std::string>& overrides) {
  try {
    return config::load_config_text(sweep.config_yaml, sweep.config_path, overrides);
  } catch (const config::ConfigError& e) {
    std::vector<std::string> messages = e.messages();
    for (std::string& m : messages)
      if (m.find("key 'data.path'") != std::string::npos)
        m += " (the data is elsewhere now? sweep resume " + name + " --set data.path=DIR)";
    throw config::ConfigError(std::move(messages));
  }
}

}  // namespace

int RunResult::exit_code() const {
  if (!store_failure.empty() || !cluster_failure.empty()) return 1;
  if (interrupted) return 128 + interrupted_by;
  if (auto it = states.find(TrialState::failed); it != states.end() && it->second > 0) return 1;
  return 0;
}

fs::path default_db_path(const std::string& out_dir, const std::string& name) {
  return database_in(sweep_dir(out_dir, name));
}

RunResult run_sweep(const config::SweepConfig& config, const RunOptions& options) {
  if (!config::can_expand(config) || config.trial_count() > config::kMaxTrials)
    throw Error("run_sweep: the SweepConfig was not made by a successful load_config");
  // The first trial's data decodes, and the first GPU starts, while the sweep is set up. Not
  // before a database that may already hold this sweep is checked: that run stops with a message
  // at once, and would wait for the decode (StartAhead's destructor).
  const fs::path run_dir = sweep_dir(config.output_dir, config.name);
  const fs::path db_path = options.db_path.empty() ? default_db_path(config.output_dir, config.name)
                                                   : fs::path(options.db_path);
  StartAhead ahead;
  std::error_code no_db;
  if (!options.cluster && !fs::exists(db_path, no_db)) ahead.data(config);
  // Devices are checked before anything is written, with every GPU count a trial may ask for.
  const DevicePlan devices =
      options.cluster ? plan_cluster_devices(config.resources, options.cluster->ranks(),
                                             options.cluster->options().coordinator_runs_trials)
                      : plan_local_devices(config.resources);
  if (!options.cluster) ahead.device(devices);
  for (const config::ParamSpec& p : config.sweep.space.params)
    if (p.name == config::kGpusPerTrialKey)
      for (const sweep::Json& value : p.values)
        gpus_for_trial(devices, sweep::Json{{config::kGpusPerTrialKey, value}});

  // One process owns a sweep: taken before the store is opened, so a refused run changes nothing.
  const SweepLock lock = SweepLock::acquire(run_dir, config.name, options.lock_wait);
  Store store(db_path);
  if (auto existing = store.find_sweep(config.name))
    throw Error("a sweep named '" + config.name + "' already exists in " + db_path.string() + " (" +
                std::string(to_string(existing->state)) + "): continue it with  sweep resume " +
                config.name + ", or start another with --name");
  if (!options.cluster) ahead.data(config);  // when the database was there (a no-op when started)

  SweepSpec sweep_spec;
  sweep_spec.name = config.name;
  sweep_spec.config_yaml = config::effective_yaml(config);
  sweep_spec.config_path = config.path;
  sweep_spec.metric_name = config.sweep.metric.name;
  sweep_spec.metric_goal =
      config.sweep.metric.maximize() ? MetricGoal::maximize : MetricGoal::minimize;
  sweep_spec.devices = devices.description;
  const std::int64_t sweep_id = store.create_sweep(sweep_spec);

  // Rows carry params and seed from the start; each trial's resolved config is recorded when it
  // starts (resolver above). A tpe sweep makes its rows as it asks (SearchFeed).
  std::vector<TrialSpec> trial_specs;
  const std::uint64_t made_now = trials_made_as_asked(config) ? 0 : config.trial_count();
  for (std::uint64_t i = 0; i < made_now; ++i) {
    const config::TrialPoint point = config::trial_point(config, i);
    TrialSpec spec;
    spec.number = point.number;
    spec.params = point.params;
    spec.seed = static_cast<std::int64_t>(point.seed);
    spec.repeat = point.repeat;
    trial_specs.push_back(std::move(spec));
  }
  store.add_trials(sweep_id, trial_specs);

  const SweepRow sweep = *store.find_sweep(sweep_id);
  const Execution x{store,
                    sweep,
                    std::make_shared<const config::SweepConfig>(config),
                    run_dir,
                    config.output_dir,
                    options};
  return execute(x, store.trials(sweep_id), false);
}

RunResult resume_sweep(const std::string& name, const ResumeOptions& options) {
  const fs::path db_path = options.run.db_path.empty() ? default_db_path(options.out_dir, name)
                                                       : fs::path(options.run.db_path);
  // The sweep's directory is where it is now (a copied or moved sweep writes into its new place),
  // never the output directory stored with its config.
  const fs::path run_dir =
      options.run.db_path.empty() ? db_path.parent_path() : sweep_dir(options.out_dir, name);
  if (!fs::exists(db_path))
    throw Error("no sweep database at " + db_path.string() +
                (options.run.db_path.empty() ? " (give --out DIR or --db PATH)" : ""));
  config::check_placement_overrides(options.overrides);
  const SweepLock lock = SweepLock::acquire(run_dir, name, options.run.lock_wait);
  Store store(db_path);
  const SweepRow found = store.sweep_named(name);

  auto config =
      std::make_shared<config::SweepConfig>(stored_config(found, name, options.overrides));
  if (options.resources) config->resources = *options.resources;
  const std::vector<TrialRow> rows = store.trials(found.id);
  for (const TrialRow& row : rows) {
    const bool known =
        row.number >= 0 && static_cast<std::uint64_t>(row.number) < config->trial_count();
    if (!known ||
        (!trials_made_as_asked(*config) &&
         config::trial_point(*config, static_cast<std::uint64_t>(row.number)).params != row.params))
      throw Error("the config stored with sweep '" + name + "' no longer gives trial " +
                  std::to_string(row.number) + " the parameters it was created with");
  }

  std::ostream& out = options.run.out ? *options.run.out : std::cout;
  // With the lock ours, no live run of this sweep has trials: a process still holding its
  // directory in SWEEP_SWEEP_DIR was left by a run killed before it could end its trainers
  // (SIGKILL, a worker killed mid-job), and would train beside the resumed trial, into the same
  // trial directory. Ended first, as a trial's own processes are (TERM, then KILL).
  if (const std::size_t left =
          scheduler::detail::end_processes_holding(sweep_dir_entry(run_dir), kLeftoverGraceS))
    out << "ended " << left << (left == 1 ? " process" : " processes")
        << " of this sweep's external trainer that its killed run had left running\n";
  const std::int64_t requeued = store.requeue_unfinished(found.id);
  std::set<std::int64_t> retried_ids;  // what they were is gone once they are requeued
  if (options.retry_failed)
    for (const TrialRow& row : rows)
      if (row.state == TrialState::failed) retried_ids.insert(row.id);
  const std::int64_t retried = options.retry_failed ? store.requeue_failed(found.id) : 0;
  std::vector<TrialRow> to_run;
  for (const TrialRow& row : store.trials(found.id))
    if (row.state == TrialState::queued) to_run.push_back(row);
  store.add_event(found.id, std::nullopt, "resumed",
                  std::to_string(to_run.size()) + " trials to run (" + std::to_string(requeued) +
                      " unfinished, " + std::to_string(retried) + " failed retried)");

  // A tpe sweep stopped before it asked for all its trials has more to make, unless it ended
  // (a reached metric.target completes a sweep: as a grid's, its unmade trials are not run).
  const bool more_to_make = trials_made_as_asked(*config) && rows.size() < config->trial_count() &&
                            found.state != SweepState::completed;
  if (to_run.empty() && !more_to_make) {
    RunResult result;
    result.name = config->name;
    result.sweep_id = found.id;
    result.run_dir = run_dir;
    result.db_path = db_path;
    const std::vector<TrialRow> finished = store.trials(found.id);
    for (const TrialRow& row : finished) ++result.states[row.state];
    result.best = store.best_trial(found.id);
    out << "nothing to resume: every trial of " << name << " has finished"
        << (result.states.count(TrialState::failed) && !options.retry_failed
                ? " (failed ones rerun with --retry-failed)"
                : "")
        << "\n";
    if (found.state != SweepState::completed)
      store.set_sweep_state(found.id, SweepState::completed);
    print_summary(out, result, *config, options.out_dir, finished);
    return result;
  }
  StartAhead ahead;  // as run_sweep's, once there is something to run
  if (!options.run.cluster) ahead.data(*config);
  const Execution x{store, found, config, run_dir, options.out_dir, options.run, retried_ids};
  return execute(x, to_run, true);
}

}  // namespace sweep::run
