/*
 * status_command.cpp — `sweep status [JOB]`: every queued job's progress, or one job's trials,
 * their states and why they wait.
 */
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/cli/text_table.h"
#include "sweep/queue/job_attempts.h"
#include "sweep/queue/queue.h"

namespace sweep::cli {

namespace fs = std::filesystem;
using queue::Queue;

namespace {

// The note of the trial's latest state only: a trial interrupted by a stopped worker and later
// completed keeps its old stop reason in the row, which says nothing about it now.
std::string trial_note(const queue::TrialResult& t) {
  if (t.state == TrialState::failed || t.state == TrialState::diverged)
    return t.error.empty() ? t.stop_reason : t.error;
  if (t.state == TrialState::stopped_early || t.state == TrialState::cancelled ||
      t.state == TrialState::interrupted)
    return t.stop_reason;
  if (t.state == TrialState::queued)
    return t.wait_reason.empty() ? "waiting for a free slot" : t.wait_reason;
  return "";
}

void print_job_status(const Queue& q, std::int64_t id) {
  const queue::Job job = q.job(id);
  const queue::JobResults results = job.fetch();
  const JobRow& row = results.job;
  std::cout << "job " << row.id << ": " << (results.sweep_name.empty() ? "?" : results.sweep_name)
            << ", " << to_string(row.state) << ", " << queue::attempt_text(row);
  if (!row.lease_owner.empty()) std::cout << ", worker " << row.lease_owner;
  std::cout << "\n";
  if (!row.error.empty()) std::cout << "error: " << row.error << "\n";
  if (!results.db_path.empty()) std::cout << "database: " << results.db_path.string() << "\n";
  if (!results.started) {
    std::cout << (row.state == JobState::queued ? "waiting for a worker to claim it\n"
                                                : "no trial has started\n");
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"TRIAL", "STATE", "DEVICE", "PARAMS", "BEST " + results.metric_name, "ATTEMPTS", "NOTE"}};
  const ParamDigits digits = trial_digits(results);
  for (const queue::TrialResult& t : results.trials)
    rows.push_back(
        {std::to_string(t.number), std::string(to_string(t.state)),
         t.device.empty() ? "-" : t.device, params_text(t.params, ParamNames::last_parts, digits),
         t.best ? significant(*t.best) : "-", std::to_string(t.attempts), trial_note(t)});
  print_table(std::cout, rows);
}

}  // namespace

void add_status_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string queue, job;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("status", "Show queued jobs, or one job's trials");
  c->add_option("JOB", o->job, "A job id: show its trials, their states and why they wait");
  add_queue_option(*c, o->queue);
  c->footer(
      "Examples:\n"
      "  sweep status        # every job: id, name, state, progress, worker\n"
      "  sweep status 3      # job 3's trials");
  c->callback([o, c, &exit_code] {
    // A bad id (an empty one too) is the same usage error whether or not a queue exists.
    std::optional<std::int64_t> id;
    if (c->count("JOB")) id = parse_job_id(o->job);
    const fs::path path = queue_path(o->queue);
    if (id && !fs::exists(path))
      throw Error("no job " + std::to_string(*id) + ": no queue database at " + path.string() +
                  " (sweep submit FILE creates it)");
    if (!fs::exists(path)) {
      std::cout << "no jobs (" << path.string() << " does not exist yet)\n";
      exit_code = kExitOk;
      return;
    }
    Queue q(path, {.read_only = true});
    if (id) {
      print_job_status(q, *id);
      exit_code = kExitOk;
      return;
    }
    std::vector<std::vector<std::string>> rows = {{"JOB", "NAME", "STATE", "PROGRESS", "WORKER"}};
    for (const queue::JobProgress& p : q.progress())
      rows.push_back({std::to_string(p.job.id), p.name.empty() ? "?" : p.name,
                      std::string(to_string(p.job.state)), p.summary(),
                      p.job.lease_owner.empty() ? "-" : p.job.lease_owner});
    if (rows.size() == 1) {
      std::cout << "no jobs in " << path.string() << "\n";
    } else {
      print_table(std::cout, rows);
      warn_if_no_worker(q, std::cout);
    }
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
