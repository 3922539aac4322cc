/*
 * planned_trials.cpp — see planned_trials.h.
 */
#include "sweep/run/planned_trials.h"

#include <filesystem>

#include "cluster/coordinator.h"
#include "common/format.h"
#include "scheduler/command_trial.h"
#include "sweep/config/expand.h"
#include "sweep/run/cluster_trials.h"
#include "sweep/run/command_environment.h"
#include "sweep/run/search_feed.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/trainer_trial.h"

namespace sweep::run {

namespace fs = std::filesystem;

// Resolves the trial's config when it starts (so a sweep of any size starts at once) and records
// it in the trial's row. A bad combination of swept values throws ConfigError: that trial fails
// with the message, the others run.
namespace {

std::function<config::TrialPlan()> resolver(const Execution& x, std::int64_t trial_id,
                                            const config::TrialPoint& point) {
  Store* store = &x.store;
  return [store, config = x.config, trial_id, point] {
    config::Diagnostics diagnostics;
    config::TrialPlan plan = config::resolve_trial(*config, point, diagnostics);
    diagnostics.throw_if_any();
    TrialUpdate update;
    update.config_yaml = plan.resolved_yaml;
    store->update_trial(trial_id, update);
    return plan;
  };
}

}  // namespace

void plan_trials(const Execution& x, const std::vector<TrialRow>& rows, bool resume,
                 const DevicePlan& devices, PlannedTrials& planned) {
  const config::SweepConfig& config = *x.config;
  const bool external = config.trainer.has_value();
  cluster::Coordinator* cluster = x.options.cluster;
  const auto sweep_yaml =
      std::make_shared<const std::string>(cluster ? config::effective_yaml(config) : "");
  for (const TrialRow& row : rows) {
    const config::TrialPoint point = point_of_row(config, row);
    const fs::path trial_dir = trial_dir_in(x.run_dir, row.number);
    TrialPaths p;
    p.trial_dir = trial_dir.string();
    p.log_path = log_in(trial_dir).string();
    p.checkpoint_path = external ? "" : checkpoint_path(p.trial_dir);
    p.write_log = !external;
    planned.paths[row.id] = p;
    planned.params[row.id] = point.params;

    scheduler::TrialSpec spec;
    spec.id = row.id;
    spec.number = row.number;
    spec.name =
        printable(params_text(point.params, ParamNames::last_parts));  // shown in the live table
    spec.timeout_s = config.resources.trial_timeout;
    spec.gpus = gpus_for_trial(devices, point.params);
    const auto resolve = resolver(x, row.id, point);
    if (external) {
      spec.params = config::fill_command(config, point).placeholders;
      scheduler::CommandSpec command;
      command.argv_template = config.trainer->command;
      command.metric_timeout_s = config.trainer->metric_timeout;
      command.metric_name = config.sweep.metric.name;
      command.log_path = p.log_path;
      command.trial_dir = p.trial_dir;
      Environment facts = command_trial_facts(config, point, x.run_dir);
      command.env = with_python_helper(facts);
      scheduler::TrialFn run_command = scheduler::make_command_trial(command);
      scheduler::TrialFn local = [resolve, run_command](scheduler::TrialContext& context) {
        resolve();  // records the resolved config; the command itself needs only placeholders
        return run_command(context);
      };
      if (cluster)
        local = cluster->place(std::move(local),
                               [resolve, &config, dir = p.trial_dir, facts = std::move(facts)] {
                                 resolve();
                                 return remote_command_trial(config, dir, facts);
                               });
      planned.fns.push_back(std::move(local));
    } else {
      spec.params = point.params;
      TrainerTrialInput input;
      input.config = [resolve] { return resolve().config; };
      input.trial_dir = p.trial_dir;
      input.cpu_threads = config.resources.cpu_threads;
      input.resume = resume;
      input.sweep_name = config.name;
      input.trial_number = row.number;
      const bool retried = x.retried.count(row.id) > 0;
      input.retried = retried;
      input.notice = [notices = x.notices](const std::string& line) { notices->say(line); };
      if (!cluster) planned.trainer_inputs[row.id] = input;
      scheduler::TrialFn local = make_trainer_trial(std::move(input));
      if (cluster)
        local = cluster->place(std::move(local), [=, threads = config.resources.cpu_threads,
                                                  path = config.path, dir = p.trial_dir] {
          // Records the resolved config in the trial's row, as a local trial does.
          const int epochs = resolve().config.training.epochs;
          cluster::RemoteTrial trial =
              remote_trainer_trial(sweep_yaml, path, row, threads, resume, retried, dir);
          trial.epochs = epochs;
          return trial;
        });
      planned.fns.push_back(std::move(local));
    }
    planned.specs.push_back(std::move(spec));
    planned.points.push_back(point);
  }
}

}  // namespace sweep::run
