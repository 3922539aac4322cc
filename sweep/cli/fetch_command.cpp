/*
 * fetch_command.cpp — `sweep fetch JOB [--json]`: a job's results at any time: every trial and
 * the best.
 */
#include <iostream>
#include <memory>

#include "common/json.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/cli/text_table.h"
#include "sweep/queue/queue.h"

namespace sweep::cli {

void add_fetch_command(CLI::App& app, int& exit_code) {
  struct Options {
    JobArguments target;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("fetch", "Print a job's results: every trial and the best");
  add_job_arguments(*c, o->target);
  c->add_flag("--json", o->json, "One JSON object: job, sweep, trials");
  c->footer(
      "Works at any time (partial results while the job runs).\n"
      "Examples:\n"
      "  sweep fetch 3\n"
      "  sweep fetch 3 --json | jq '.trials[] | select(.state == \"completed\")'");
  c->callback([o, &exit_code] {
    const queue::JobResults results = open_job(o->target, {.read_only = true}).job.fetch();
    if (o->json) {
      std::cout << json_text(results.to_json(), 2) << "\n";
      exit_code = kExitOk;
      return;
    }
    std::cout << "job " << results.job.id << " (" << to_string(results.job.state) << "): sweep "
              << results.sweep_name << "\n";
    if (!results.started) {
      std::cout << "no results yet: no trial has started\n";
      exit_code = kExitOk;
      return;
    }
    std::vector<std::vector<std::string>> rows = {
        {"TRIAL", "STATE", "PARAMS", "BEST " + results.metric_name}};
    const ParamDigits digits = trial_digits(results);
    for (const queue::TrialResult& t : results.trials)
      rows.push_back({std::to_string(t.number), std::string(to_string(t.state)),
                      params_text(t.params, ParamNames::last_parts, digits),
                      t.best ? significant(*t.best) : "-"});
    print_table(std::cout, rows);
    if (results.best && is_broken(results.best->trial.state))  // only broken trials have a value
      std::cout << "best: no successful trial (trial " << results.best->trial.number << " reached "
                << results.metric_name << " " << significant(results.best->value) << " before it "
                << to_string(results.best->trial.state) << ")\n";
    else if (results.best)
      std::cout << "best: trial " << results.best->trial.number << ", " << results.metric_name
                << " " << significant(results.best->value) << " ("
                << printable(
                       params_text(results.best->trial.params, ParamNames::last_parts, digits))
                << ")\n";
    std::cout << "database: " << results.db_path.string() << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
