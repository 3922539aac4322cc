/*
 * cancel_command.cpp — `sweep cancel JOB`: cancel a queued job at once, a running one at its
 * worker's next heartbeat.
 */
#include <iostream>
#include <memory>

#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/queue/queue.h"

namespace sweep::cli {

void add_cancel_command(CLI::App& app, int& exit_code) {
  struct Options {
    JobArguments target;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("cancel", "Cancel a queued or running job");
  add_job_arguments(*c, o->target);
  c->footer(
      "A queued job is cancelled at once. A running one: its worker sees it at its next\n"
      "heartbeat; running trials stop at their next iteration and keep their checkpoint.\n"
      "Exit status: 0 cancelled, 1 the job had already ended.\n"
      "Example:\n"
      "  sweep cancel 3");
  c->callback([o, &exit_code] {
    const queue::Job job = open_job(o->target, {.must_exist = true}).job;
    const JobState before = job.state();
    if (job.cancel()) {
      std::cout << "job " << job.id() << " cancelled"
                << (before == JobState::running ? ": its worker stops the running trials at their "
                                                  "next iteration"
                                                : "")
                << "\n";
      exit_code = kExitOk;
    } else {
      std::cerr << "job " << job.id() << " had already ended (" << to_string(job.state()) << ")\n";
      exit_code = kExitFailure;
    }
  });
}

}  // namespace sweep::cli
