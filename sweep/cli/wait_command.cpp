/*
 * wait_command.cpp — `sweep wait JOB [--timeout S]`: block until a job ends; its exit status
 * tells how it ended.
 */
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/queue/job_bounds.h"
#include "sweep/queue/queue.h"

namespace sweep::cli {

void add_wait_command(CLI::App& app, int& exit_code) {
  struct Options {
    JobArguments target;
    double timeout = 0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("wait", "Block until a job ends");
  add_job_arguments(*c, o->target);
  c->add_option("--timeout", o->timeout, "Give up after this many seconds (0: never)")
      ->transform(bounded(queue::wait_timeout_problem,
                          "in [0 - " + shortest(queue::kMaxWaitSeconds) + "]"));
  c->footer(
      "Exit status: 0 done, 1 failed, 3 cancelled, 124 timed out.\n"
      "Examples:\n"
      "  sweep wait 3\n"
      "  sweep wait 3 --timeout 600 && sweep fetch 3");
  c->callback([o, &exit_code] {
    auto [q, job] = open_job(o->target, {.read_only = true});
    // Waits in slices, looking between them whether any worker is still alive: a worker that
    // dies while we wait must not leave us waiting in silence. Said again after workers came back
    // and were lost once more.
    using Seconds = std::chrono::duration<double>;
    const auto deadline = std::chrono::steady_clock::now() + Seconds(o->timeout);
    std::optional<JobState> state;
    NoWorkerNote no_worker;
    for (;;) {
      if (is_terminal(job.state())) {
        state = job.state();
        break;
      }
      no_worker.look(q, std::cerr);
      Seconds slice(2.0);
      if (o->timeout > 0) {
        const Seconds left = deadline - std::chrono::steady_clock::now();
        if (left <= Seconds(0)) break;
        slice = std::min(slice, left);
      }
      if ((state = job.wait(slice))) break;
    }
    if (!state) {
      std::cerr << "job " << job.id() << " is still " << to_string(job.state()) << " after "
                << o->timeout << " s\n";
      exit_code = kExitTimeout;
      return;
    }
    std::cout << "job " << job.id() << " " << to_string(*state) << "\n";
    const JobRow row = job.row();
    if (!row.error.empty()) std::cerr << "job " << job.id() << ": " << row.error << "\n";
    exit_code = *state == JobState::done        ? kExitOk
                : *state == JobState::cancelled ? kExitCancelled
                                                : kExitFailure;
  });
}

}  // namespace sweep::cli
