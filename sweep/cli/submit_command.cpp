/*
 * submit_command.cpp — `sweep submit FILE`: validate a sweep, store it as a queued job, and start a
 * detached worker when none is alive.
 */
#include <filesystem>
#include <iostream>
#include <memory>

#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/config/config.h"
#include "sweep/queue/job_bounds.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/worker.h"

namespace sweep::cli {

namespace fs = std::filesystem;
using queue::Queue;

void add_submit_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string file, queue, name, out;
    std::vector<std::string> overrides;
    std::int64_t priority = 0;
    int max_attempts = 3;
    bool no_worker = false;
    double worker_idle_exit = 60;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c =
      app.add_subcommand("submit", "Queue a sweep to run in the background; prints its job id");
  c->add_option("FILE", o->file, "The sweep's YAML config")->required();
  add_set_option(*c, o->overrides);
  add_queue_option(*c, o->queue);
  c->add_option("--priority", o->priority, "Higher runs first; equal priority: submit order")
      ->capture_default_str()
      ->transform(bounded(queue::priority_problem, "in [-2^53 - 2^53]"));
  c->add_option("--name", o->name, "Name of the sweep (default: the config's name)")
      ->type_name("NAME");
  c->add_option("--out", o->out, "Directory for runs (default: output.dir, runs)")
      ->type_name("DIR")
      ->check(CLI::Validator(
          [](const std::string& out) {
            // Refused here, not by the worker that would fail the job later.
            if (out.empty()) return std::string("'': expected a directory, not an empty value");
            const std::string problem = queue::output_dir_problem(fs::absolute(out));
            return problem.empty() ? problem : printable(out) + ": " + problem;
          },
          "DIR"));
  c->add_option("--max-attempts", o->max_attempts,
                "A trial that killed its worker this many times is failed; the sweep goes on")
      ->capture_default_str()
      ->transform(bounded(queue::max_attempts_problem,
                          "in [1 - " + std::to_string(queue::kMaxTrialAttempts) + "]"));
  c->add_flag("--no-worker", o->no_worker, "Do not start a worker (one runs elsewhere)");
  c->add_option("--worker-idle-exit", o->worker_idle_exit,
                "The started worker exits once the queue stayed empty this many seconds (0: never)")
      ->capture_default_str()
      ->transform(
          bounded(queue::idle_exit_problem, "in [0 - " + shortest(queue::kMaxWorkerSeconds) + "]"));
  c->footer(
      "Validates the config like `sweep validate`, stores the job and returns; a detached worker\n"
      "(`sweep worker`) is started when none is alive. The sweep goes to OUT/NAME/sweep.db as\n"
      "with `sweep run`. Exit status: 0 queued, 2 bad config, 1 any other error.\n"
      "Examples:\n"
      "  sweep submit configs/quickstart.yaml\n"
      "  sweep submit configs/fashion-mnist-lenet.yaml --set training.epochs=2 --priority 5");
  c->callback([o, c, &exit_code] {
    queue::SubmitOptions options;
    options.overrides = o->overrides;
    if (c->count("--name")) options.name = o->name;
    if (c->count("--out")) options.output_dir = o->out;
    options.priority = o->priority;
    options.max_attempts = o->max_attempts;
    options.worker_idle_exit_s = o->worker_idle_exit;
    if (!o->no_worker) options.worker_binary = self_executable();
    try {
      Queue q(queue_path(o->queue));
      const queue::Job job = q.submit(o->file, options);
      print_config_warnings(job.config_warnings());
      std::cout << job.id() << "\n";
      if (!job.started_worker_log().empty())
        std::cerr << "started a worker (log: " << job.started_worker_log() << ")\n";
      exit_code = kExitOk;
    } catch (const config::ConfigError& e) {
      exit_code = report_config_error(o->file, e.messages());
    }
  });
}

}  // namespace sweep::cli
