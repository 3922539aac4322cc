/*
 * queue_arguments.h — what the queue's subcommands (submit, worker, status, wait, cancel, logs,
 * fetch; one file each, *_command.cpp) share: --queue PATH (default $SWEEP_HOME/queue.db, else
 * ~/.sweep/queue.db), the JOB argument, flags read through the queue's bounds, and the note that
 * no worker is alive. Every subcommand calls sweep/queue/queue.h; nothing here touches SQL.
 *
 * The decision: readers (status, wait, logs, fetch) open the queue read-only, so polling them in
 * a loop never takes SQLite's write lock away from the workers; only submit, cancel and the
 * worker write, and of them only submit and the worker create the queue. A JOB argument is
 * checked before the queue is opened: a bad id is a usage error (exit 2) whether or not a queue
 * exists. `sweep report JOB` lives in report_command.cpp (NAME or JOB).
 */
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>

#include "common/format.h"
#include "sweep/cli/text_table.h"
#include "sweep/queue/queue.h"

namespace sweep::cli {

constexpr int kExitCancelled = 3;
constexpr int kExitTimeout = 124;

// --queue's value, or the default queue when it was not given.
std::filesystem::path queue_path(const std::string& given);
void add_queue_option(CLI::App& command, std::string& path);

// The running `sweep` executable, for starting a detached worker.
std::string self_executable();

// A job id as typed; anything else is a usage error naming `sweep status`.
std::int64_t parse_job_id(const std::string& text);

// The arguments of a subcommand about one job (wait, cancel, logs, fetch).
struct JobArguments {
  std::string queue, job;
};
// Adds the required JOB and --queue.
void add_job_arguments(CLI::App& command, JobArguments& args);

// The job JOB names and the queue --queue names, opened with `options`. The id is read before the
// queue is opened: a bad one is a usage error whether or not a queue exists.
struct OpenedJob {
  queue::Queue queue;
  queue::Job job;
};
OpenedJob open_job(const JobArguments& args, queue::QueueOptions options);

// Digits per parameter that tell apart the values in a job's trials (text_table.h).
ParamDigits trial_digits(const queue::JobResults& results);

// A job whose worker died and which no live worker will pick up would wait forever.
bool no_worker_for_pending_jobs(const queue::Queue& q);
void say_no_worker(const queue::Queue& q, std::ostream& out);
void warn_if_no_worker(const queue::Queue& q, std::ostream& out);

// The no-worker note of a command that keeps looking (wait, logs -f): said once per loss of the
// workers, again after workers came back and were lost once more.
class NoWorkerNote {
 public:
  void look(const queue::Queue& q, std::ostream& out);

 private:
  bool warned_ = false;
};

// A flag's value through one of worker.h's or job_bounds.h's bounds, checked as the command line
// is read (before a worker claims anything, before a job is stored or waited for): a bad one is a
// usage error, exit 2, "--lease: nan: expected seconds above 0, at most 604800 (a week)". Not
// CLI11's PositiveNumber / Range: they let NaN through (every comparison with it is false), and
// their message gives the bounds of a double in 309 digits. Two readings of CLI11's are refused
// or corrected here: an empty value, which it takes as 0 (`--timeout ''` waited for good), and a
// whole number with a leading 0, which it reads as octal (--priority 010 was 8): whole numbers are
// decimal. A text that is not a number at all is left to CLI11's "Could not convert". Given with
// ->transform, not ->check: CLI11 hands a check a copy, and the decimal text must reach the value.
template <typename T>
CLI::Validator bounded(std::string (*problem)(T), std::string description) {
  return CLI::Validator(
      [problem](std::string& input) {
        if (input.empty()) return std::string("'': expected a number, not an empty value");
        const std::string given = printable(input);
        T value{};
        if constexpr (std::is_integral_v<T>) {
          const std::string digits = input.starts_with('+') ? input.substr(1) : input;
          long long wide = 0;
          const auto [end, error] =
              std::from_chars(digits.data(), digits.data() + digits.size(), wide);
          if (digits.empty() || end != digits.data() + digits.size())
            return given + ": expected a whole number";
          // Beyond T: said in the bound's own words, through the nearest end of T.
          const bool negative = digits.starts_with('-');
          if (error == std::errc::result_out_of_range || wide > std::numeric_limits<T>::max() ||
              wide < std::numeric_limits<T>::min())
            value = negative ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
          else
            value = static_cast<T>(wide);
        } else if (!CLI::detail::lexical_cast(input, value)) {
          return std::string();
        }
        if (const std::string why = problem(value); !why.empty()) return given + ": " + why;
        if constexpr (std::is_integral_v<T>) input = std::to_string(value);  // as CLI11 reads it
        return std::string();
      },
      std::move(description));
}

}  // namespace sweep::cli
