/*
 * cluster_trials.cpp — payloads and the factories that turn them back into TrialFns on a host.
 * A host keeps the last sweep config it parsed: all trials of a sweep share it, so loading it
 * (which checks its trials) happens once per rank, not once per trial.
 */
#include "sweep/run/cluster_trials.h"

#include <csignal>
#include <mutex>

#include "scheduler/command_trial.h"
#include "sweep/config/config_error.h"
#include "sweep/config/expand.h"
#include "sweep/run/command_environment.h"
#include "sweep/run/search_feed.h"
#include "sweep/run/sweep_layout.h"
#include "sweep/run/trainer_trial.h"
#include "trainer/backend/backend.h"

namespace sweep::run {

namespace fs = std::filesystem;

cluster::RemoteTrial remote_trainer_trial(const std::shared_ptr<const std::string>& sweep_yaml,
                                          const std::string& config_path, const TrialRow& row,
                                          int cpu_threads, bool resume, bool retried,
                                          const std::string& trial_dir) {
  cluster::RemoteTrial trial;
  trial.kind = kTrainerTrialKind;
  trial.payload = {
      {"config_yaml", *sweep_yaml}, {"config_path", config_path}, {"number", row.number},
      {"params", row.params},  // a tpe trial's values exist only in its row
      {"repeat", row.repeat},       {"cpu_threads", cpu_threads}, {"resume", resume},
      {"retried", retried}};
  trial.trial_dir = trial_dir;
  trial.files = {checkpoint_in(trial_dir).filename().string()};  // the log is written here
  return trial;
}

cluster::RemoteTrial remote_command_trial(const config::SweepConfig& config,
                                          const std::string& trial_dir,
                                          const std::map<std::string, std::string>& facts) {
  cluster::RemoteTrial trial;
  trial.kind = kCommandTrialKind;
  trial.payload = {{"command", config.trainer->command},
                   {"metric_timeout", config.trainer->metric_timeout},
                   {"metric_name", config.sweep.metric.name},
                   {"env", facts}};
  trial.trial_dir = trial_dir;
  return trial;  // every file of its directory travels: the program's own checkpoints too
}

namespace {

std::shared_ptr<const config::SweepConfig> parsed(const std::string& yaml,
                                                  const std::string& path) {
  static std::mutex mutex;
  static std::string last_yaml, last_path;
  static std::shared_ptr<const config::SweepConfig> last;
  std::lock_guard lock(mutex);
  if (!last || yaml != last_yaml || path != last_path) {
    last = std::make_shared<const config::SweepConfig>(config::load_config_text(yaml, path));
    last_yaml = yaml;
    last_path = path;
  }
  return last;
}

scheduler::TrialFn trainer_from(const cluster::RemoteTrialInput& in) {
  const auto& p = in.payload;
  auto config =
      parsed(p.at("config_yaml").get<std::string>(), p.at("config_path").get<std::string>());
  TrialRow row;
  row.number = p.at("number").get<std::int64_t>();
  row.params = p.at("params");
  row.repeat = p.at("repeat").get<std::int64_t>();
  TrainerTrialInput input;
  input.config = [config, row] {
    config::Diagnostics diagnostics;
    config::TrialPlan plan =
        config::resolve_trial(*config, point_of_row(*config, row), diagnostics);
    diagnostics.throw_if_any();
    return plan.config;
  };
  input.trial_dir = in.trial_dir;
  input.cpu_threads = p.at("cpu_threads").get<int>();
  input.resume = p.at("resume").get<bool>();
  input.sweep_name = config->name;
  input.trial_number = row.number;
  input.retried = p.at("retried").get<bool>();
  input.checkpoint_written = [written = in.file_written](const std::string& path) {
    written(fs::path(path).filename().string());
  };
  return make_trainer_trial(std::move(input));
}

scheduler::TrialFn command_from(const cluster::RemoteTrialInput& in) {
  const auto& p = in.payload;
  scheduler::CommandSpec command;
  command.argv_template = p.at("command").get<std::string>();
  command.metric_timeout_s = p.at("metric_timeout").get<double>();
  command.metric_name = p.at("metric_name").get<std::string>();
  command.trial_dir = in.trial_dir;
  command.log_path = log_in(in.trial_dir).string();
  command.env = with_python_helper(p.at("env").get<Environment>());
  return scheduler::make_command_trial(std::move(command));
}

}  // namespace

cluster::TrialFactories sweep_trial_factories() {
  return {{kTrainerTrialKind, trainer_from}, {kCommandTrialKind, command_from}};
}

int serve_host(cluster::Transport& transport, const cluster::ClusterOptions& options) {
  // Ctrl-C is rank 0's to handle (srun forwards it to every task): rank 0 stops the sweep and its
  // hosts' trials save a checkpoint; a host that died of SIGINT would be a lost rank instead.
  std::signal(SIGINT, SIG_IGN);
  cluster::HostFacts facts;
  facts.cuda_built = trainer::cuda_backend_built();
  facts.cuda_devices = trainer::cuda_device_count();
  return cluster::serve(transport, facts, sweep_trial_factories(), options);
}

}  // namespace sweep::run
