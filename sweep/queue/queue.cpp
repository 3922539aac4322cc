/*
 * queue.cpp — submit (validate, name check, enqueue, make sure a worker runs), and the read side:
 * a job's state, progress and results, read from the queue database and, for progress and
 * results, from the job's own sweep database (opened read-only, so a reader never blocks the
 * worker writing it).
 */
#include "sweep/queue/queue.h"

#include <cmath>
#include <sstream>
#include <thread>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "sweep/queue/job_bounds.h"
#include "sweep/queue/worker.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::queue {

namespace fs = std::filesystem;

namespace {

std::optional<Store> open_sweep_db(const fs::path& db) {
  std::error_code ec;
  if (!fs::exists(db, ec)) return std::nullopt;
  try {
    return Store(db, StoreOptions{.read_only = true});
  } catch (const Error&) {
    // The worker is creating it this very moment (no tables yet): not started, as far as we know.
    return std::nullopt;
  }
}

}  // namespace

// ---- a job's sweep ------------------------------------------------------------------------------

JobSweep job_sweep(const JobRow& job) {
  const auto target = target_of(job);
  if (!target)
    throw Error("job " + std::to_string(job.id) +
                " was not submitted by sweep submit: its sweep's place is unknown");
  return {sweep_db(*target), target->sweep_name};
}

// ---- progress ---------------------------------------------------------------------------------

std::string JobProgress::summary() const {
  if (trials_total == 0) return "-";
  std::string text =
      std::to_string(trials_finished) + "/" + std::to_string(trials_total) + " trials";
  if (trials_running > 0) text += " (" + std::to_string(trials_running) + " running)";
  if (best) text += ", best " + metric_name + " " + significant(*best);
  return text;
}

JobProgress progress_of(const JobRow& row) {
  JobProgress progress;
  progress.job = row;
  const auto target = target_of(row);
  if (!target) return progress;
  progress.name = target->sweep_name;
  auto store = open_sweep_db(sweep_db(*target));
  if (!store) return progress;
  const auto sweep = store->find_sweep(target->sweep_name);
  if (!sweep) return progress;
  progress.metric_name = sweep->metric_name;
  for (const TrialRow& trial : store->trials(sweep->id)) {
    ++progress.trials_total;
    if (is_terminal(trial.state)) ++progress.trials_finished;
    if (trial.state == TrialState::running) ++progress.trials_running;
  }
  if (auto best = store->best_trial(sweep->id)) progress.best = best->value;
  return progress;
}

// ---- Job ----------------------------------------------------------------------------------------

JobRow Job::row() const {
  auto found = store_->job(id_);
  if (!found)
    throw Error("job " + std::to_string(id_) + " is no longer in " + store_->path().string());
  return *found;
}

JobState Job::state() const { return row().state; }

std::optional<JobState> Job::wait(std::optional<std::chrono::duration<double>> timeout) const {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            timeout.value_or(std::chrono::duration<double>(0)));
  for (;;) {
    const JobState now = state();
    if (is_terminal(now)) return now;
    if (timeout && std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

bool Job::cancel() const { return store_->cancel_job(id_); }

std::optional<JobTarget> Job::target() const { return target_of(row()); }

JobProgress Job::progress() const { return progress_of(row()); }

JobResults Job::fetch() const {
  JobResults results;
  results.job = row();
  const auto target = target_of(results.job);
  if (!target) return results;
  results.sweep_name = target->sweep_name;
  results.db_path = sweep_db(*target);
  auto store = open_sweep_db(results.db_path);
  if (!store) return results;
  const auto sweep = store->find_sweep(target->sweep_name);
  if (!sweep) return results;
  results.started = true;
  results.metric_name = sweep->metric_name;
  results.metric_goal = sweep->metric_goal;
  const sweep::Json exported = store->export_json(sweep->id);
  std::map<std::int64_t, double> best_by_number;
  for (const auto& trial : exported.at("trials")) {
    const auto& best = trial.at("best");
    if (best.contains(sweep->metric_name) && best.at(sweep->metric_name).is_number())
      best_by_number[trial.at("number").get<std::int64_t>()] =
          best.at(sweep->metric_name).get<double>();
  }
  for (const TrialRow& row : store->trials(sweep->id)) {
    TrialResult trial;
    trial.number = row.number;
    trial.state = row.state;
    trial.params = row.params;
    if (auto it = best_by_number.find(row.number); it != best_by_number.end())
      trial.best = it->second;
    trial.device = row.device;
    trial.wait_reason = row.wait_reason;
    trial.stop_reason = row.stop_reason;
    trial.error = row.error;
    trial.attempts = row.attempts;
    results.trials.push_back(std::move(trial));
  }
  results.best = store->best_trial(sweep->id);
  return results;
}

sweep::Json JobResults::to_json() const {
  sweep::Json trials_json = sweep::Json::array();
  for (const TrialResult& t : trials) {
    sweep::Json best_json = nullptr;
    if (t.best && std::isfinite(*t.best)) best_json = *t.best;
    trials_json.push_back({{"number", t.number},
                           {"state", to_string(t.state)},
                           {"params", t.params},
                           {"best", best_json},
                           {"device", t.device},
                           {"attempts", t.attempts},
                           {"wait_reason", t.wait_reason},
                           {"stop_reason", t.stop_reason},
                           {"error", t.error}});
  }
  sweep::Json best_json = nullptr;
  if (best)
    best_json = {{"trial", best->trial.number}, {"value", best->value}, {"step", best->step}};
  return {{"job",
           {{"id", job.id},
            {"state", to_string(job.state)},
            {"attempts", job.attempts},
            {"worker", job.lease_owner},
            {"error", job.error},
            {"exit_code", job.exit_code ? sweep::Json(*job.exit_code) : sweep::Json(nullptr)}}},
          {"sweep",
           {{"name", sweep_name},
            {"database", db_path.string()},
            {"started", started},
            {"metric", {{"name", metric_name}, {"goal", to_string(metric_goal)}}},
            {"best", best_json}}},
          {"trials", trials_json}};
}

// ---- Queue --------------------------------------------------------------------------------------

Queue::Queue(const fs::path& path, QueueOptions options) : paths_(path) {
  if ((options.read_only || options.must_exist) && !fs::exists(paths_.db))
    throw Error("no queue database at " + paths_.db.string() +
                ": nothing was submitted there yet (sweep submit FILE creates it)");
  store_ = std::make_shared<Store>(paths_.db, StoreOptions{.read_only = options.read_only});
  // One schema serves a queue and a sweep's results; only a sweep's database has sweeps. Taken
  // as a queue, a job row would be written among a sweep's results.
  if (const std::vector<SweepSummary> sweeps = store_->list_sweeps(); !sweeps.empty())
    throw Error(paths_.db.string() + " is the results database of sweep '" +
                sweeps.front().sweep.name +
                "', not a job queue: give --queue a queue database (default " +
                default_queue_path().string() + ")");
}

Job Queue::job(std::int64_t id) const {
  if (!store_->job(id))
    throw Error("no job " + std::to_string(id) + " in " + paths_.db.string() +
                " (sweep status lists them)");
  return Job(store_, id);
}

std::vector<JobRow> Queue::jobs() const { return store_->jobs(); }

std::vector<JobProgress> Queue::progress() const {
  std::vector<JobProgress> all;
  for (const JobRow& row : store_->jobs()) all.push_back(progress_of(row));
  return all;
}

Job Queue::submit(const std::string& config_path, const SubmitOptions& options) {
  std::vector<std::string> overrides = options.overrides;
  // Given, even empty: an empty --name is an error the config reader reports, not "unset".
  if (options.name) overrides.push_back(config::flag_override("--name", *options.name));
  if (options.output_dir) overrides.push_back(config::flag_override("--out", *options.output_dir));
  return submit(config::load_config(config_path, overrides), options);
}

Job Queue::submit(const config::SweepConfig& config, const SubmitOptions& options) {
  if (const std::string problem = max_attempts_problem(options.max_attempts); !problem.empty())
    throw Error("max_attempts " + std::to_string(options.max_attempts) + ": " + problem);
  if (const std::string problem = priority_problem(options.priority); !problem.empty())
    throw Error("priority " + std::to_string(options.priority) + ": " + problem);
  // The worker it would start takes the same bound (`sweep worker --idle-exit`): refused here, not
  // by a detached worker that exits in the background with the job left queued.
  if (!options.worker_binary.empty())
    if (const std::string problem = idle_exit_problem(options.worker_idle_exit_s); !problem.empty())
      throw Error("worker_idle_exit_s " + shortest(options.worker_idle_exit_s) + ": " + problem);
  JobTarget target;
  target.working_dir =
      fs::absolute(options.working_dir.empty() ? fs::current_path() : fs::path(options.working_dir))
          .lexically_normal()
          .string();
  target.sweep_name = config.name;
  target.output_dir = config.output_dir;
  target.overrides = config.overrides;
  target.trial_crash_limit = options.max_attempts;
  const fs::path db = sweep_db(target).lexically_normal();
  if (const std::string problem = output_dir_problem(run_dir(target).parent_path());
      !problem.empty())
    throw Error("cannot run sweep '" + config.name + "' into " +
                run_dir(target).parent_path().string() + ": " + problem);

  if (auto existing = open_sweep_db(db); existing && existing->find_sweep(config.name))
    throw Error("a sweep named '" + config.name + "' already exists in " + db.string() +
                ": continue it with  sweep resume " + config.name +
                ", or submit with --name OTHER");
  for (const JobRow& row : store_->jobs()) {
    if (is_terminal(row.state)) continue;
    const auto other = target_of(row);
    if (other && sweep_db(*other).lexically_normal() == db)
      throw Error("job " + std::to_string(row.id) + " (" + std::string(to_string(row.state)) +
                  ") already runs a sweep named '" + config.name + "' into " + db.string() +
                  ": submit with --name OTHER");
  }

  JobSpec spec;
  spec.config_path =
      config.path.empty() ? "" : fs::absolute(config.path).lexically_normal().string();
  spec.config_yaml = config::effective_yaml(config);
  spec.target = target;
  spec.priority = options.priority;
  spec.max_attempts = options.max_attempts + 1;
  Job job(store_, store_->enqueue_job(spec));

  if (!options.worker_binary.empty()) {
    DetachedWorkerOptions worker;
    worker.sweep_binary = options.worker_binary;
    worker.worker_args = {"--idle-exit", shortest(options.worker_idle_exit_s)};
    const std::string started = start_detached_worker(paths_, worker);
    job.worker_note_ = started.empty() ? "" : paths_.worker_log(started).string();
  }
  job.config_warnings_ = config.warnings;
  return job;
}

}  // namespace sweep::queue
