/*
 * queue_arguments.cpp — the queue subcommands' shared arguments and the no-worker note.
 */
#include "sweep/cli/queue_arguments.h"

#include "sweep/cli/text_table.h"
#include "sweep/queue/worker_registry.h"

namespace sweep::cli {

namespace fs = std::filesystem;

std::filesystem::path queue_path(const std::string& given) {
  return given.empty() ? queue::default_queue_path() : fs::path(given);
}

void add_queue_option(CLI::App& command, std::string& path) {
  command
      .add_option("--queue", path,
                  "Queue database (default: $SWEEP_HOME/queue.db, else ~/.sweep/queue.db)")
      ->type_name("PATH");
}

std::string self_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find the sweep executable (/proc/self/exe): " + ec.message());
  return self.string();
}

std::int64_t parse_job_id(const std::string& text) {
  std::size_t used = 0;
  long long id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || id < 1)
    throw CLI::ValidationError("JOB", "'" + text + "' is not a job id (sweep status lists them)");
  return id;
}

void add_job_arguments(CLI::App& command, JobArguments& args) {
  command.add_option("JOB", args.job, "The job id")->required();
  add_queue_option(command, args.queue);
}

OpenedJob open_job(const JobArguments& args, queue::QueueOptions options) {
  const std::int64_t id = parse_job_id(args.job);
  queue::Queue q(queue_path(args.queue), options);
  queue::Job job = q.job(id);
  return {std::move(q), std::move(job)};
}

ParamDigits trial_digits(const queue::JobResults& results) {
  std::vector<const Json*> params;
  for (const queue::TrialResult& t : results.trials) params.push_back(&t.params);
  return table_digits(params);
}

bool no_worker_for_pending_jobs(const queue::Queue& q) {
  bool pending = false;
  for (const JobRow& row : q.jobs()) pending = pending || !is_terminal(row.state);
  return pending && queue::alive_workers(q.paths()).empty();
}

void say_no_worker(const queue::Queue& q, std::ostream& out) {
  out << "note: no worker is alive for " << q.paths().db.string()
      << ", so no job moves on (a worker that held one has died): start one with  sweep worker "
         "--detach"
      << (q.paths().db == queue::default_queue_path() ? std::string()
                                                      : " --queue " + q.paths().db.string())
      << "\n";
}

void warn_if_no_worker(const queue::Queue& q, std::ostream& out) {
  if (no_worker_for_pending_jobs(q)) say_no_worker(q, out);
}

void NoWorkerNote::look(const queue::Queue& q, std::ostream& out) {
  const bool no_worker = no_worker_for_pending_jobs(q);
  if (no_worker && !warned_) say_no_worker(q, out);
  warned_ = no_worker;
}

}  // namespace sweep::cli
