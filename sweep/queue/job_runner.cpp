/*
 * job_runner.cpp — claim → (recover) → run_sweep / resume_sweep → finish, with a heartbeat thread
 * beside the run.
 *
 * Whether to resume is decided by the job's attempts, not by the sweep's existence alone: on the
 * first claim an existing sweep of the same name belongs to someone else, and run_sweep refuses
 * it with `sweep run`'s own message; on a later claim it is this job's own, left by a worker that
 * died (or was stopped), and it is continued in place.
 *
 * The job's log gets one opening line per attempt and, after everything else the attempt writes,
 * one closing line (job_log.h: how `sweep logs -f` knows the log is complete).
 */
#include "sweep/queue/job_runner.h"

#include <memory>
#include <sstream>

#include "common/own_file_stream.h"
#include "sweep/config/config.h"
#include "sweep/queue/crash_recovery.h"
#include "sweep/queue/job_attempts.h"
#include "sweep/queue/job_log.h"
#include "sweep/queue/job_target.h"
#include "sweep/run/run_sweep.h"

namespace sweep::queue {

namespace fs = std::filesystem;

namespace {

std::string now_text() {
  const std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
  return text;
}

// Restores the worker's working directory when the job is over.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& dir) : previous_(fs::current_path()) {
    if (!fs::is_directory(dir))
      throw Error("the directory the job was submitted from, " + dir.string() +
                  ", no longer exists");
    fs::current_path(dir);
  }
  ~WorkingDirectory() {
    std::error_code ec;
    fs::current_path(previous_, ec);
  }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

bool sweep_exists(const fs::path& db, const std::string& name) {
  if (!fs::exists(db)) return false;
  Store store(db);
  return store.find_sweep(name).has_value();
}

struct RunEnd {
  std::optional<int> exit_code;  // set when the run returned
  std::string error;             // why it failed, for the job row
  // The job's sweep: OUT/NAME and NAME, as far as they are known ("" before the config is read,
  // for a job enqueued without a target).
  fs::path run_dir;
  std::string sweep_name;
};

RunEnd run_job_sweep(const JobRunContext& context, const JobRow& job, std::ostream& log,
                     std::atomic<bool>& stop) {
  RunEnd end;
  if (const auto target = target_of(job); target && !target->sweep_name.empty()) {
    end.run_dir = run_dir(*target);
    end.sweep_name = target->sweep_name;
  }
  try {
    JobTarget target = job.target;
    if (target.working_dir.empty())  // enqueued by other code: run where the worker runs
      target.working_dir = fs::current_path().string();
    WorkingDirectory cwd(target.working_dir);
    config::SweepConfig config = config::load_config_text(job.config_yaml, job.config_path);
    if (target.sweep_name.empty()) target.sweep_name = config.name;
    if (target.output_dir.empty()) target.output_dir = config.output_dir;
    apply_worker_devices(config.resources, context.worker.devices, context.worker.cpu_slots);

    run::RunOptions options;
    options.out = &log;
    options.live = false;
    options.handle_sigint = false;
    options.cluster = context.worker.cluster;
    options.stop = &stop;
    options.stop_reason = "job " + std::to_string(job.id) + " stopped by its worker";
    // A worker that lost this job's lease while paused stops at its next heartbeat and lets go
    // of the sweep; wait for that instead of failing the attempt.
    options.lock_wait = std::chrono::duration<double>(context.worker.timing.lease_s + 10);

    const fs::path db = sweep_db(target);
    end.run_dir = run_dir(target);
    end.sweep_name = config.name;
    if (job.attempts > 1) {  // claimed before: its workers may have been lost
      const RecoveryReport recovered = recover_crashed_trials(db, config.name, job, log);
      if (std::string reason = give_up_reason(job, recovered); !reason.empty()) {
        end.error = std::move(reason);
        log << "job " << job.id << ": " << end.error << std::endl;
        return end;
      }
    }
    run::RunResult result;
    if (job.attempts > 1 && sweep_exists(db, config.name)) {
      log << "continuing sweep " << config.name << " in " << db.string() << std::endl;
      run::ResumeOptions resume;
      resume.run = options;
      resume.out_dir = config.output_dir;
      resume.resources = config.resources;
      result = run::resume_sweep(config.name, resume);
    } else {
      result = run::run_sweep(config, options);
    }
    end.exit_code = result.exit_code();
    if (*end.exit_code == 1) {
      const auto failed = result.states.find(TrialState::failed);
      const int count = failed == result.states.end() ? 0 : failed->second;
      end.error = std::to_string(count) + (count == 1 ? " trial" : " trials") +
                  " failed (sweep status " + std::to_string(job.id) + " says why)";
    } else if (*end.exit_code != 0) {
      end.error = "the sweep was interrupted";
    }
  } catch (const config::ConfigError& e) {
    std::string text;
    for (const std::string& line : e.messages()) text += (text.empty() ? "" : "\n") + line;
    end.error = "bad config: " + text;
    // resources.* in the message may be the worker's override, not what the config says.
    if (!context.worker.devices.empty())
      end.error +=
          " (this worker overrides resources with --devices " + context.worker.devices + ")";
  } catch (const std::exception& e) {
    end.error = e.what();
  }
  if (!end.error.empty()) log << "job " << job.id << ": " << end.error << std::endl;
  return end;
}

// A failed job leaves no trial `running`: those its run could not end (it failed before it
// requeued the trials a lost worker had left running) become interrupted, kept for a resume.
// Never throws: the job's own end is recorded after this either way.
void leave_no_trial_running(const JobRow& job, const RunEnd& end, std::ostream& log) {
  if (end.sweep_name.empty()) return;
  try {
    interrupt_orphaned_trials(end.run_dir, end.sweep_name,
                              "job " + std::to_string(job.id) + " failed: " + end.error, log);
  } catch (const std::exception& e) {
    log << "job " << job.id << ": its sweep's trials could not be looked at: " << e.what()
        << std::endl;
  }
}

void mark_sweep_cancelled(const JobRow& job) {
  try {
    const auto target = target_of(job);
    if (!target || !fs::exists(sweep_db(*target))) return;
    Store store(sweep_db(*target));
    if (auto sweep = store.find_sweep(target->sweep_name))
      store.set_sweep_state(sweep->id, SweepState::cancelled);
  } catch (const std::exception&) {
    // The job is cancelled either way; the sweep's own state is only a label.
  }
}

}  // namespace

StopCause run_claimed_job(const JobRunContext& context, const JobRow& job) {
  const fs::path log_path = context.paths.job_log(job.id);
  fs::create_directories(log_path.parent_path());
  // The job's log is a file of sweep's own (common/own_file.h), never written through a symbolic
  // link. When it cannot be opened the job fails with the reason, rather than the worker ending
  // with the job claimed.
  std::unique_ptr<OwnFileStream> opened;
  try {
    opened = std::make_unique<OwnFileStream>(log_path);
  } catch (const Error& e) {
    context.queue.finish_job(job.id, context.owner, JobState::failed, 1, e.what());
    return StopCause::none;
  }
  std::ostream& log = *opened;
  log.setf(std::ios::unitbuf);  // `sweep logs -f` shows each line as it is written
  log << attempt_opening(job, context.owner, now_text()) << std::endl;

  std::atomic<bool> stop{false};
  RunEnd end;
  StopCause cause;
  {
    Heartbeat heartbeat(context.queue, job.id, context.owner, context.worker.timing, stop,
                        context.shutting_down, log_path);
    end = run_job_sweep(context, job, log, stop);
    cause = heartbeat.cause();
  }

  try {
    switch (cause) {
      case StopCause::cancelled:
        mark_sweep_cancelled(job);
        log << attempt_closing(job.id, " cancelled: running trials kept their checkpoints")
            << std::endl;
        break;
      case StopCause::lease_lost:
        log << attempt_closing(job.id, ": this worker lost it; another worker continues it")
            << std::endl;
        break;
      case StopCause::worker_stopping:
        // Hand the job back now rather than when the lease runs out, without spending one of its
        // attempts: a worker stopped on purpose is not the job failing.
        if (context.queue.release_job(job.id, context.owner))
          log << attempt_closing(job.id, " handed back to the queue: the worker is shutting down")
              << std::endl;
        else
          log << attempt_closing(job.id, ": the worker is shutting down and no longer held it")
              << std::endl;
        break;
      case StopCause::none: {
        const bool ok = end.exit_code && *end.exit_code == 0;
        if (!ok) leave_no_trial_running(job, end, log);
        const bool recorded =
            context.queue.finish_job(job.id, context.owner, ok ? JobState::done : JobState::failed,
                                     end.exit_code ? std::optional<std::int64_t>(*end.exit_code)
                                                   : std::optional<std::int64_t>(1),
                                     end.error);
        log << attempt_closing(job.id,
                               std::string(ok ? " done" : " failed") +
                                   (recorded ? ""
                                             : " (not recorded: the job was taken from this worker "
                                               "meanwhile)"),
                               now_text())
            << std::endl;
        break;
      }
    }
  } catch (const std::exception& e) {
    log << attempt_closing(job.id, std::string(": recording its end failed: ") + e.what())
        << std::endl;
  }
  return cause;
}

}  // namespace sweep::queue
