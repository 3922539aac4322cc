/*
 * logs_command.cpp — `sweep logs JOB [-f]`: print a job's log, or follow it until the job's last
 * attempt wrote its closing line.
 */
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "sweep/cli/commands.h"
#include "sweep/cli/queue_arguments.h"
#include "sweep/queue/job_log.h"
#include "sweep/queue/queue.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::cli {

namespace fs = std::filesystem;
void add_logs_command(CLI::App& app, int& exit_code) {
  struct Options {
    JobArguments target;
    bool follow = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("logs", "Print a job's log (what its worker's run printed)");
  add_job_arguments(*c, o->target);
  c->add_flag("-f,--follow", o->follow,
              "Keep printing new lines until the job ends and its worker wrote its last line");
  c->footer(
      "Every attempt of the job appends to one log (its progress, each trial's end, why it\n"
      "stopped). Each trial's own log is OUT/NAME/trials/NNN/log.txt. -f ends with the log's\n"
      "last line: a cancelled job's worker writes on after the job shows cancelled (its trials\n"
      "stopping, their summary); -f waits for that, or for the worker to die.\n"
      "Examples:\n"
      "  sweep logs 3\n"
      "  sweep logs 3 -f");
  c->callback([o, &exit_code] {
    auto [q, job] = open_job(o->target, {.read_only = true});
    const fs::path log = q.paths().job_log(job.id());
    queue::JobLogTail tail(log, job.id());
    if (!o->follow) {
      if (!fs::exists(log)) {
        std::cerr << "job " << job.id() << " has no log yet (" << to_string(job.state()) << ")\n";
        exit_code = is_terminal(job.state()) ? kExitFailure : kExitOk;
        return;
      }
      std::cout << tail.read_new() << std::flush;
      exit_code = kExitOk;
      return;
    }
    // The job's row ending is not the log ending (job_log.h): once the row is terminal, follow
    // until the latest attempt's closing line is read, or until that attempt's worker is found
    // dead (what it wrote before dying is read after that look, so nothing is missed).
    NoWorkerNote no_worker;
    auto next_worker_look = std::chrono::steady_clock::now();
    for (;;) {
      const bool ended = is_terminal(job.state());  // read before the file: nothing is missed
      std::cout << tail.read_new() << std::flush;
      if (ended) {
        if (!tail.attempt_open()) break;
        const std::string owner = tail.open_attempt_owner();
        if (!queue::worker_alive(q.paths(), owner)) {
          std::cout << tail.read_new() << std::flush;
          if (tail.attempt_open())
            std::cerr << "job " << job.id() << ": its worker " << printable(owner)
                      << " died before finishing the log\n";
          break;
        }
      } else if (std::chrono::steady_clock::now() >= next_worker_look) {
        // A dead worker's running job that no live worker will reclaim never ends: say so (once
        // per loss), as `sweep wait` does, every 2 s as it does, and keep following (a worker
        // started later takes the job on).
        next_worker_look = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        no_worker.look(q, std::cerr);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
