/*
 * run_sweep.cpp — glue: config → store rows → executor → progress → summary and report.
 *
 * The run loop stays on the caller's thread: it polls for finished trials a few times a second,
 * which is also when it redraws the live table, notices Ctrl-C (the signal handler only counts)
 * and a reached metric.target. Every trial thread only reports; nothing waits on the console.
 */
#include "sweep/run_sweep.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include "reports/report.h"
#include "scheduler/command_trial.h"
#include "scheduler/executor.h"
#include "scheduler/futures.h"
#include "scheduler/stopping/stopping_policy.h"
#include "store/store.h"
#include "sweep/console_progress.h"
#include "sweep/devices.h"
#include "sweep/expand.h"
#include "sweep/sigint.h"
#include "sweep/store_sink.h"
#include "sweep/trainer_trial.h"
#include "trainer/backend.h"

namespace sweep::run {

namespace fs = std::filesystem;

namespace {

std::string trial_dir_name(std::int64_t number) {
  char text[32];
  std::snprintf(text, sizeof text, "%03lld", static_cast<long long>(number));
  return text;
}

// "learning_rate=0.01 batch_size=64": the last part of each dotted name, when that is unambiguous.
std::string short_params(const nlohmann::ordered_json& params) {
  std::set<std::string> seen;
  bool unique = true;
  for (const auto& [name, value] : params.items()) {
    const std::string last = name.substr(name.rfind('.') + 1);
    unique = unique && seen.insert(last).second;
  }
  std::string text;
  for (const auto& [name, value] : params.items()) {
    if (!text.empty()) text += ' ';
    text += (unique ? name.substr(name.rfind('.') + 1) : name) + "=" + config::format_value(value);
  }
  return text.empty() ? "(base config)" : text;
}

struct Execution {
  Store& store;
  const SweepRow& sweep;
  const config::SweepConfig& config;
  const std::vector<config::TrialPlan>& plans;
  const fs::path run_dir;
  const RunOptions& options;
};

void print_summary(std::ostream& out, const RunResult& result, const config::SweepConfig& config) {
  out << "\nsweep " << result.name << ": ";
  bool first = true;
  for (const auto& [state, count] : result.states) {
    out << (first ? "" : ", ") << count << " " << to_string(state);
    first = false;
  }
  out << "\n";
  if (result.interrupted)
    out << "interrupted: continue with  sweep resume " << result.name
        << (config.output_dir == "runs" ? "" : " --out " + config.output_dir) << "\n";
  if (!result.target_reached_by.empty())
    out << "target " << config.sweep.metric.name << " reached by " << result.target_reached_by
        << ": the other trials were cancelled\n";
  if (result.best) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [name, value] : result.best->trial.params.items()) params[name] = value;
    out << "best: trial " << result.best->trial.number << ", " << config.sweep.metric.name << " "
        << config::format_value(result.best->value) << " (" << short_params(params) << ")\n";
  } else {
    out << "best: no trial reported " << config.sweep.metric.name << "\n";
  }
  out << "database: " << result.db_path.string() << "\n";
  if (!result.report_path.empty()) out << "report:   " << result.report_path.string() << "\n";
}

RunResult execute(Execution& x, const std::vector<TrialRow>& to_run, bool resume) {
  std::ostream& out = x.options.out ? *x.options.out : std::cout;
  const bool live = x.options.live.value_or(::isatty(STDOUT_FILENO) == 1 && !x.options.out);
  const config::SweepConfig& config = x.config;
  const bool external = config.trainer.has_value();

  DevicePlan devices =
      plan_devices(config.resources, trainer::cuda_device_count(), trainer::cuda_backend_built());

  // Per trial: where it writes, what it runs.
  std::map<std::int64_t, TrialPaths> paths;
  std::vector<scheduler::TrialSpec> specs;
  std::vector<scheduler::TrialFn> fns;
  const scheduler::TrialFn trainer_fn = make_trainer_trial();
  for (const TrialRow& row : to_run) {
    const config::TrialPlan& plan = x.plans.at(static_cast<std::size_t>(row.number));
    const fs::path trial_dir = x.run_dir / "trials" / trial_dir_name(row.number);
    TrialPaths p;
    p.trial_dir = trial_dir.string();
    p.log_path = (trial_dir / "log.txt").string();
    p.checkpoint_path = external ? "" : checkpoint_path(p.trial_dir);
    p.write_log = !external;
    paths[row.id] = p;

    scheduler::TrialSpec spec;
    spec.id = row.id;
    spec.number = row.number;
    spec.name = short_params(plan.params);
    spec.timeout_s = config.resources.trial_timeout;
    if (external) {
      spec.params = plan.placeholders;
      scheduler::CommandSpec command;
      command.argv_template = config.trainer->command;
      command.metric_timeout_s = config.trainer->metric_timeout;
      command.log_path = p.log_path;
      command.trial_dir = p.trial_dir;
      fns.push_back(scheduler::make_command_trial(command));
    } else {
      auto input = std::make_shared<TrainerTrialInput>();
      input->config = plan.config;
      input->trial_dir = p.trial_dir;
      input->cpu_threads = config.resources.cpu_threads;
      input->resume = resume;
      spec.payload = std::shared_ptr<const TrainerTrialInput>(std::move(input));
      spec.params = nlohmann::json::parse(plan.params.dump());
      fns.push_back(trainer_fn);
    }
    specs.push_back(std::move(spec));
  }

  auto store_sink = std::make_shared<StoreSink>(x.store, x.sweep.id, paths);
  auto console =
      std::make_shared<ConsoleProgress>(out, live, config.sweep.metric.name, specs.size());
  std::shared_ptr<scheduler::StoppingPolicy> policy;
  if (config.sweep.early_terminate)
    policy = scheduler::make_stopping_policy(
        config.sweep.early_terminate->policy, config.sweep.metric.name,
        config.sweep.metric.maximize() ? scheduler::MetricGoal::maximize
                                       : scheduler::MetricGoal::minimize);

  out << (resume ? "resuming " : "running ") << config.name << ": " << specs.size()
      << (specs.size() == 1 ? " trial" : " trials") << " on " << devices.description
      << (policy ? ", early stopping: " + policy->describe() : std::string()) << "\n";
  out.flush();

  std::optional<SigintGuard> sigint;
  if (x.options.handle_sigint) sigint.emplace();

  // metric.target: the first trial to reach it ends the sweep (the others are cancelled).
  std::atomic<std::int64_t> target_trial{-1};
  const auto& metric = config.sweep.metric;

  x.store.set_sweep_state(x.sweep.id, SweepState::running);
  RunResult result;
  {
    scheduler::Executor executor(devices.executor, {store_sink, console}, policy);
    std::vector<scheduler::TrialFuture> futures;
    std::vector<std::int64_t> trial_ids;
    for (const auto& spec : specs) trial_ids.push_back(spec.id);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      scheduler::TrialCallbacks callbacks;
      if (metric.target) {
        // Cancel at once, from the reporting trial's thread (the executor allows it), so no
        // other trial starts after the target was reached.
        const std::int64_t number = specs[i].number, id = specs[i].id;
        callbacks.on_metric = [&target_trial, &metric, &executor, &trial_ids, number,
                               id](const scheduler::MetricPoint& p) {
          if (p.name != metric.name || !std::isfinite(p.value)) return;
          const bool reached =
              metric.maximize() ? p.value >= *metric.target : p.value <= *metric.target;
          std::int64_t none = -1;
          if (!reached || !target_trial.compare_exchange_strong(none, number)) return;
          for (std::int64_t other : trial_ids)
            if (other != id) executor.cancel(other);
        };
      }
      futures.push_back(executor.submit(specs[i], fns[i], callbacks));
      // Submitted after an earlier trial reached the target: cancel it too.
      if (target_trial.load() >= 0) futures.back().cancel();
    }
    bool interrupt_sent = false, target_handled = false;
    std::size_t done = 0;
    while (done < futures.size()) {
      if (scheduler::fetch_next(futures, std::chrono::milliseconds(250))) ++done;
      if (sigint && SigintGuard::count() > 0 && !interrupt_sent) {
        interrupt_sent = true;
        console->note(
            "Ctrl-C: stopping; running trials save a checkpoint (Ctrl-C again quits "
            "at once)");
        executor.interrupt("interrupted by Ctrl-C");
      }
      if (x.options.stop && x.options.stop->load() && !interrupt_sent) {
        interrupt_sent = true;
        console->note(x.options.stop_reason + ": running trials save a checkpoint and stop");
        executor.interrupt(x.options.stop_reason);
      }
      if (target_trial.load() >= 0 && !target_handled) {
        target_handled = true;
        result.target_reached_by = "trial " + std::to_string(target_trial.load());
        console->note("target " + metric.name + " reached by " + result.target_reached_by +
                      ": the other trials are cancelled");
      }
      console->redraw();
    }
    console->clear();
    result.interrupted = executor.interrupted();
    executor.shutdown();
  }
  store_sink->flush();
  x.store.set_sweep_state(x.sweep.id,
                          result.interrupted ? SweepState::interrupted : SweepState::completed);

  result.name = config.name;
  result.sweep_id = x.sweep.id;
  result.run_dir = x.run_dir;
  result.db_path = x.store.path();
  result.trials_run = static_cast<int>(specs.size());
  for (const TrialRow& row : x.store.trials(x.sweep.id)) ++result.states[row.state];
  result.best = x.store.best_trial(x.sweep.id);
  if (x.options.write_report) {
    const fs::path report = x.run_dir / "report.html";
    try {
      reports::write_report(x.store, config.name, report.string());
      result.report_path = report;
    } catch (const std::exception& e) {
      out << "warning: the report could not be written: " << e.what() << "\n";
    }
  }
  print_summary(out, result, config);
  return result;
}

}  // namespace

int RunResult::exit_code() const {
  if (interrupted) return 130;
  if (auto it = states.find(TrialState::failed); it != states.end() && it->second > 0) return 1;
  return 0;
}

fs::path default_db_path(const std::string& out_dir, const std::string& name) {
  return fs::path(out_dir) / name / "sweep.db";
}

RunResult run_sweep(const config::SweepConfig& config, const RunOptions& options) {
  const std::vector<config::TrialPlan> plans = config::expand(config);
  // Devices are checked before anything is written.
  plan_devices(config.resources, trainer::cuda_device_count(), trainer::cuda_backend_built());

  const fs::path run_dir = fs::path(config.output_dir) / config.name;
  const fs::path db_path = options.db_path.empty() ? default_db_path(config.output_dir, config.name)
                                                   : fs::path(options.db_path);
  Store store(db_path);
  if (auto existing = store.find_sweep(config.name))
    throw Error("a sweep named '" + config.name + "' already exists in " + db_path.string() + " (" +
                std::string(to_string(existing->state)) + "): continue it with  sweep resume " +
                config.name + ", or start another with --name");

  SweepSpec sweep_spec;
  sweep_spec.name = config.name;
  sweep_spec.config_yaml = config::effective_yaml(config);
  sweep_spec.config_path = config.path;
  sweep_spec.metric_name = config.sweep.metric.name;
  sweep_spec.metric_goal =
      config.sweep.metric.maximize() ? MetricGoal::maximize : MetricGoal::minimize;
  sweep_spec.devices =
      plan_devices(config.resources, trainer::cuda_device_count(), trainer::cuda_backend_built())
          .description;
  const std::int64_t sweep_id = store.create_sweep(sweep_spec);

  std::vector<TrialSpec> trial_specs;
  for (const config::TrialPlan& plan : plans) {
    TrialSpec spec;
    spec.number = plan.number;
    spec.params = nlohmann::json::parse(plan.params.dump());
    spec.config_yaml = plan.resolved_yaml;
    spec.seed = static_cast<std::int64_t>(plan.seed);
    spec.repeat = plan.repeat;
    trial_specs.push_back(std::move(spec));
  }
  store.add_trials(sweep_id, trial_specs);

  const SweepRow sweep = *store.find_sweep(sweep_id);
  Execution x{store, sweep, config, plans, run_dir, options};
  return execute(x, store.trials(sweep_id), false);
}

RunResult resume_sweep(const std::string& name, const ResumeOptions& options) {
  const fs::path db_path = options.run.db_path.empty() ? default_db_path(options.out_dir, name)
                                                       : fs::path(options.run.db_path);
  if (!fs::exists(db_path))
    throw Error("no sweep database at " + db_path.string() +
                (options.run.db_path.empty() ? " (give --out DIR or --db PATH)" : ""));
  Store store(db_path);
  const std::optional<SweepRow> found = store.find_sweep(name);
  if (!found) throw Error("no sweep named '" + name + "' in " + db_path.string());

  config::SweepConfig config = config::load_config_text(found->config_yaml, found->config_path);
  if (options.resources) config.resources = *options.resources;
  const std::vector<config::TrialPlan> plans = config::expand(config);
  for (const TrialRow& row : store.trials(found->id)) {
    const bool known = row.number >= 0 && static_cast<std::size_t>(row.number) < plans.size();
    if (!known || nlohmann::json::parse(
                      plans[static_cast<std::size_t>(row.number)].params.dump()) != row.params)
      throw Error("the config stored with sweep '" + name + "' no longer gives trial " +
                  std::to_string(row.number) + " the parameters it was created with");
  }

  std::ostream& out = options.run.out ? *options.run.out : std::cout;
  const std::int64_t requeued = store.requeue_unfinished(found->id);
  const std::int64_t retried = options.retry_failed ? store.requeue_failed(found->id) : 0;
  std::vector<TrialRow> to_run;
  for (const TrialRow& row : store.trials(found->id))
    if (row.state == TrialState::queued) to_run.push_back(row);
  store.add_event(found->id, std::nullopt, "resumed",
                  std::to_string(to_run.size()) + " trials to run (" + std::to_string(requeued) +
                      " unfinished, " + std::to_string(retried) + " failed retried)");

  const fs::path run_dir = fs::path(config.output_dir) / config.name;
  if (to_run.empty()) {
    RunResult result;
    result.name = config.name;
    result.sweep_id = found->id;
    result.run_dir = run_dir;
    result.db_path = db_path;
    for (const TrialRow& row : store.trials(found->id)) ++result.states[row.state];
    result.best = store.best_trial(found->id);
    out << "nothing to resume: every trial of " << name << " has finished"
        << (result.states.count(TrialState::failed) && !options.retry_failed
                ? " (failed ones rerun with --retry-failed)"
                : "")
        << "\n";
    if (found->state != SweepState::completed)
      store.set_sweep_state(found->id, SweepState::completed);
    print_summary(out, result, config);
    return result;
  }
  Execution x{store, *found, config, plans, run_dir, options.run};
  return execute(x, to_run, true);
}

}  // namespace sweep::run
