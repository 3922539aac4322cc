/*
 * command_trial.cpp — runs one external program as a trial: spawn, read both pipes line by line,
 * turn JSON lines into metrics, enforce stop / metric timeout, map the exit status.
 *
 * The loop never blocks longer than one poll tick (50 ms), so a stop request, a silent program
 * and a program that exits while a grandchild still holds its stdout are all noticed in time.
 * After the program itself exits we read what is left for at most a short drain window, then the
 * ChildProcess destructor kills whatever is left of its process group.
 */
#include "scheduler/command_trial.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <optional>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "common/own_file.h"
#include "common/utf8.h"
#include "scheduler/child_process.h"
#include "scheduler/metric_line.h"
#include "scheduler/metric_steps.h"
#include "scheduler/trial_environment.h"

namespace sweep::scheduler {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollTick = std::chrono::milliseconds(50);
constexpr auto kDrainWindow = std::chrono::milliseconds(500);
constexpr std::size_t kMaxLineBytes = 1 << 20;  // a "line" longer than this is cut

ssize_t unless_would_block(ssize_t result) {
  return result == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -2 : result;
}
int unless_interrupted(int result) { return result == -1 && errno == EINTR ? 0 : result; }

// Appends lines to the trial's log file (both streams, in the order read). The file is one of
// sweep's own (common/own_file.h): a symbolic link there fails the trial, never gets the output.
class LogFile {
 public:
  explicit LogFile(const std::string& path) {
    if (path.empty()) return;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    int fd;
    SWEEP_CHECK_SYS(fd = open_own_file(path, O_WRONLY | O_CREAT | O_APPEND));
    fd_ = detail::FileDescriptor(fd);
  }
  void write_line(std::string_view line) {
    if (!fd_.valid()) return;
    std::string text(line);
    text += '\n';
    std::size_t written = 0;
    while (written < text.size()) {
      ssize_t n;
      SWEEP_CHECK_SYS(
          n = unless_would_block(::write(fd_.get(), text.data() + written, text.size() - written)));
      if (n > 0) written += static_cast<std::size_t>(n);
    }
  }

 private:
  detail::FileDescriptor fd_;
};

// A piece of output as LineBuffer passes it on: a whole line, or a part of one longer than
// kMaxLineBytes (its first part, then the rest in parts).
enum class Piece { line, first_part, later_part };

// Splits one pipe's bytes into lines.
struct LineBuffer {
  std::string pending;
  bool at_eof = false;
  bool cutting = false;  // pending continues a line already passed on in parts

  // Reads what is available now; calls on_line(text, piece) for each complete line or part.
  template <typename OnLine>
  void read_available(detail::FileDescriptor& fd, OnLine&& on_line) {
    char chunk[8192];
    for (;;) {
      ssize_t n;
      SWEEP_CHECK_SYS(n = unless_would_block(::read(fd.get(), chunk, sizeof chunk)));
      if (n == -2) return;  // nothing more right now
      if (n == 0) {
        at_eof = true;
        if (!pending.empty()) on_line(std::exchange(pending, {}), ended());
        return;
      }
      pending.append(chunk, static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string line = pending.substr(start, nl - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        on_line(std::move(line), ended());
      }
      pending.erase(0, start);
      if (pending.size() > kMaxLineBytes) {
        on_line(std::exchange(pending, {}), cutting ? Piece::later_part : Piece::first_part);
        cutting = true;
      }
    }
  }

 private:
  // What a newline (or the end of the stream) ends: a line, or the last part of a cut one.
  Piece ended() { return std::exchange(cutting, false) ? Piece::later_part : Piece::line; }
};

class CommandRun {
 public:
  CommandRun(const CommandSpec& command, TrialContext& context)
      : command_(command), context_(context) {}

  TrialOutcome run() {
    const TrialSpec& spec = context_.spec();
    const Device& device = context_.device();
    const std::vector<std::string> argv = expand_command(command_, spec, device);
    const std::string trial_dir =
        command_.trial_dir.empty() ? std::string()
                                   : substitute_placeholders(command_.trial_dir, spec, "", device);
    if (!trial_dir.empty()) std::filesystem::create_directories(trial_dir);
    const std::string working_dir =
        substitute_placeholders(command_.working_dir, spec, trial_dir, device);
    LogFile log_file(substitute_placeholders(command_.log_path, spec, trial_dir, device));
    log_file_ = &log_file;

    std::map<std::string, std::string> env;
    for (const auto& [key, value] : command_.env)
      env[key] = substitute_placeholders(value, spec, trial_dir, device);
    // The trial's GPUs become the program's devices 0, 1, ...; "" hides every GPU from a CPU
    // trial.
    std::string visible;
    if (device.kind == DeviceKind::cuda)
      for (const Device& d : context_.devices()) {
        if (!visible.empty()) visible += ',';
        visible += std::to_string(d.index);
      }
    env["CUDA_VISIBLE_DEVICES"] = visible;
    env[kTrialIdVariable] = std::to_string(spec.id);
    env[kTrialNumberVariable] = std::to_string(spec.number);
    env[kTrialNameVariable] = spec.name;
    env[kDeviceVariable] = device.label();
    if (!trial_dir.empty()) env[kTrialDirVariable] = trial_dir;

    detail::ChildProcess child(argv, detail::environment_with(env), working_dir);
    last_metric_at_ = Clock::now();

    std::optional<detail::ExitStatus> exit;
    std::optional<Clock::time_point> term_sent_at, exited_at;
    bool kill_sent = false;
    std::string failure;  // our own reason to end it (metric timeout)
    for (;;) {
      poll_pipes(child);
      const auto now = Clock::now();
      if (!exit && (exit = child.try_wait())) exited_at = now;
      if (exit) {
        // Done once both pipes closed; a grandchild still holding one gets a short drain window.
        if ((out_.at_eof && err_.at_eof) || now - *exited_at > kDrainWindow) break;
        continue;
      }
      if (!term_sent_at) {
        if (command_.metric_timeout_s > 0 &&
            now - last_metric_at_ > std::chrono::duration<double>(command_.metric_timeout_s))
          failure = "no metric reported in " + shortest(command_.metric_timeout_s) + " s";
        if (failure.empty() && !diverged_.empty())
          context_.log(diverged_ + ": stopping the program (diverged)");
        if (!failure.empty() || !diverged_.empty() || context_.should_stop()) {
          child.signal_group(SIGTERM);
          term_sent_at = now;
        }
      } else if (!kill_sent &&
                 now - *term_sent_at > std::chrono::duration<double>(command_.kill_grace_s)) {
        child.signal_group(SIGKILL);
        kill_sent = true;
      }
    }
    // A program that exited may leave children behind (a setsid'd worker, a daemon): they end
    // with the trial, politely first.
    child.end_leftovers(command_.kill_grace_s);
    return outcome(*exit, failure);
  }

 private:
  void poll_pipes(detail::ChildProcess& child) {
    pollfd fds[2];
    LineBuffer* buffers[2];
    detail::FileDescriptor* pipes[2];
    nfds_t count = 0;
    if (!out_.at_eof) {
      fds[count] = {child.stdout_pipe().get(), POLLIN, 0};
      buffers[count] = &out_;
      pipes[count++] = &child.stdout_pipe();
    }
    if (!err_.at_eof) {
      fds[count] = {child.stderr_pipe().get(), POLLIN, 0};
      buffers[count] = &err_;
      pipes[count++] = &child.stderr_pipe();
    }
    const int tick_ms = static_cast<int>(kPollTick.count());
    int ready;
    SWEEP_CHECK_SYS(ready = unless_interrupted(::poll(count ? fds : nullptr, count, tick_ms)));
    for (nfds_t i = 0; i < count && ready > 0; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (buffers[i] == &out_)
        out_.read_available(*pipes[i],
                            [&](std::string line, Piece piece) { on_stdout_line(line, piece); });
      else
        err_.read_available(*pipes[i], [&](std::string line, Piece) { on_stderr_line(line); });
    }
  }

  // The trial's log file keeps the program's bytes; everything else takes its lines as UTF-8
  // (common/utf8.h): a metric name or a failure's stderr with another byte would make the store's
  // JSON throw, and the trial's end then went unrecorded.
  void on_stdout_line(const std::string& raw, Piece piece) {
    log_file_->write_line(raw);
    const std::string line = valid_utf8(raw);
    if (piece == Piece::line) {
      if (!report_metrics(line)) context_.log(line);
      return;
    }
    if (piece == Piece::later_part) return;  // in the log file; the first part was said
    // A line too long to be read in one piece is never read as metrics; one that meant to be a
    // metric line is said to be refused, where a refused line is said.
    const std::size_t first = line.find_first_not_of(" \t");
    if (first < line.size() && line[first] == '{')
      refused("metric line refused (longer than " + std::to_string(kMaxLineBytes >> 20) +
              " MiB): " + line.substr(0, 200));
    else
      context_.log(line.substr(0, 200) + "... (a line longer than " +
                   std::to_string(kMaxLineBytes >> 20) + " MiB, cut in the trial's log)");
  }

  void on_stderr_line(const std::string& raw) {
    log_file_->write_line(raw);
    const std::string line = valid_utf8(raw);
    stderr_tail_.push_back(line);
    while (stderr_tail_.size() > command_.stderr_tail_lines) stderr_tail_.pop_front();
    context_.log(line);
  }

  // What sweep says about the program's output: in the trial's log file, after the line it is
  // about (marked as ours), and to the sinks. The sinks do not write an external trial's log file
  // (it writes its own), so it would not reach that file otherwise.
  void said(const std::string& text) {
    log_file_->write_line("sweep: " + text);
    context_.log(text);
  }
  // Why a line was not read as metrics.
  void refused(const std::string& why) { said(why); }

  // A metric line → one MetricPoint per numeric member (metric_line.h). False when the line is
  // not a metric line (it is then a log line); a refused one is logged with its reason.
  bool report_metrics(const std::string& line) {
    const MetricLine parsed = parse_metric_line(line);
    if (!parsed.problem.empty()) {
      refused("metric line refused (" + parsed.problem + "): " + line.substr(0, 200));
      return true;
    }
    // The sweep's metric written as no number ("high", null): the line is meant as metrics, and
    // dropping it without a word left the trainer's author guessing.
    if (!command_.metric_name.empty() &&
        std::find(parsed.not_numbers.begin(), parsed.not_numbers.end(), command_.metric_name) !=
            parsed.not_numbers.end()) {
      refused("metric line refused (" + command_.metric_name +
              " is not a number): " + line.substr(0, 200));
      return true;
    }
    if (!parsed.is_metric_line) return false;
    const std::int64_t step = parsed.step.value_or(metric_lines_ + 1);
    std::vector<std::string> names;
    for (const auto& [name, value] : parsed.values) names.push_back(name);
    // Never two values of one metric at one step of this run: the store would keep only one.
    const StepPlacer::Placed placed = steps_.place(step, parsed.epoch, names);
    if (!placed.problem.empty()) {
      refused("metric line refused (" + placed.problem + "): " + line.substr(0, 200));
      return true;
    }
    if (!placed.note.empty()) said(placed.note);
    if (!parsed.note.empty()) said(parsed.note + ": " + line.substr(0, 200));
    ++metric_lines_;
    // The sweep's metric last: sinks take it as the line's moment (the console's per-epoch line
    // shows train_loss beside it), so every other value of its line has arrived by then.
    std::vector<std::pair<std::string, double>> values = parsed.values;
    std::stable_partition(values.begin(), values.end(),
                          [&](const auto& value) { return value.first != command_.metric_name; });
    for (const auto& [name, value] : values) {
      MetricPoint point{name, value, placed.step, parsed.epoch.value_or(0), 0};
      point.epoch_position = parsed.epoch_position.value_or(0);
      context_.report(point);
      last_values_[name] = value;
      if (diverged_.empty() && !std::isfinite(value) && diverges(name))
        diverged_ = name + " became " + (std::isnan(value) ? "NaN" : "infinite") + " at step " +
                    std::to_string(step);
    }
    last_metric_at_ = Clock::now();
    return true;
  }

  // The divergence rule: the sweep's metric, or any metric named like a loss, gone NaN or ±Inf.
  bool diverges(const std::string& name) const {
    return name == command_.metric_name || name.find("loss") != std::string::npos;
  }

  TrialOutcome outcome(const detail::ExitStatus& exit, const std::string& failure) const {
    sweep::Json summary = {{"metrics", last_values_}, {"metric_lines", metric_lines_}};
    if (exit.exited)
      summary["exit_code"] = exit.code;
    else
      summary["signal"] = exit.signal;
    if (failure.empty() && !diverged_.empty())
      return {TrialState::diverged, diverged_, std::move(summary)};
    if (failure.empty() && exit.exited && exit.code == 0) {
      // A program that ended well but never reported the sweep's metric is no result: the
      // sweep cannot rank it, its stopping rules never saw it, and a search learns nothing.
      // (It counted as completed, and the sweep ended 0 with "no trial reported val_accuracy".)
      if (!command_.metric_name.empty() && !last_values_.contains(command_.metric_name)) {
        std::string reported;
        for (const auto& item : last_values_.items())
          reported += (reported.empty() ? "" : ", ") + item.key();
        return {TrialState::failed,
                "exited 0 without reporting " + command_.metric_name +
                    (reported.empty() ? std::string(" (no metric line at all)")
                                      : " (it reported " + reported + ")"),
                std::move(summary)};
      }
      return {TrialState::completed, "", std::move(summary)};
    }
    std::string message = failure.empty() ? exit.describe() : failure;
    if (!stderr_tail_.empty()) {
      message += "; last stderr:";
      for (const auto& line : stderr_tail_) message += " | " + line;
    }
    return {TrialState::failed, std::move(message), std::move(summary)};
  }

  const CommandSpec& command_;
  TrialContext& context_;
  LogFile* log_file_ = nullptr;
  LineBuffer out_, err_;
  std::deque<std::string> stderr_tail_;
  sweep::Json last_values_ = sweep::Json::object();
  std::int64_t metric_lines_ = 0;
  StepPlacer steps_;  // this run's steps: a resumed trial's next run starts its own
  Clock::time_point last_metric_at_;
  std::string diverged_;  // why the trial diverged ("loss became NaN at step 40"), or ""
};

}  // namespace

TrialFn make_command_trial(CommandSpec spec) {
  if (spec.kill_grace_s < 0) throw Error("command: kill_grace_s must be >= 0");
  if (spec.metric_timeout_s < 0) throw Error("command: metric_timeout_s must be >= 0");
  split_command_template(spec.argv_template);  // a malformed template fails now, not per trial
  auto shared = std::make_shared<const CommandSpec>(std::move(spec));
  return [shared](TrialContext& context) { return CommandRun(*shared, context).run(); };
}

}  // namespace sweep::scheduler
