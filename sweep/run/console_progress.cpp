/*
 * console_progress.cpp — ANSI in place redraw: back to the first line of the old table
 * (CR, ESC[nA), clear to the end of the screen (ESC[J), print the new table; erase, lines above
 * and table go out in one write. Nothing above the table is touched, so scrolled-by lines stay.
 *
 * After the window narrowed, most terminals (tmux, VTE, iTerm2, kitty, Windows Terminal) re-wrap
 * the old table's lines that are now too long, so it takes more rows than it had lines: the
 * cursor goes up by those rows. xterm cuts such lines instead; there this goes up too far and
 * erases a few scrolled-by lines above the table, once per narrowing — never a stale table.
 */
#include "sweep/run/console_progress.h"

#include <cmath>
#include <sstream>

#include "common/format.h"
#include "common/metric_names.h"
#include "sweep/run/terminal_text.h"

namespace sweep::run {

namespace {

constexpr std::size_t kRecentFinished = 5;  // finished trials the table lists

// NaN is how the table marks a value not reported yet.
std::string number_text(double value, int digits) {
  return std::isnan(value) ? "-" : fixed(value, digits);
}

double seconds_between(std::chrono::steady_clock::time_point from,
                       std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

ConsoleProgress::ConsoleProgress(std::ostream& out, ConsoleSetup setup)
    : out_(out), setup_(std::move(setup)), best_(setup_.best) {
  if (best_) contenders_[best_->number] = {rank_of(*best_), best_->params};
}

MetricGoal ConsoleProgress::goal() const {
  return setup_.maximize ? MetricGoal::maximize : MetricGoal::minimize;
}

RankedTrial ConsoleProgress::rank_of(const BestSoFar& best) {
  return {best.value, best.step, best.number, best.broken};
}

void ConsoleProgress::offer(const RankedTrial& rank, const Json& params) {
  Contender& mine = contenders_[rank.number];
  if (mine.rank.best && !ranks_before(rank, mine.rank, goal())) return;
  mine = {rank, params};
  // A trial's best only gets better, so only it can overtake the best so far.
  if (!best_ || ranks_before(rank, rank_of(*best_), goal()))
    best_ = BestSoFar{rank.number, *rank.best, params, rank.best_step, rank.broken};
}

void ConsoleProgress::pick_best() {
  const Contender* first = nullptr;
  for (const auto& [number, c] : contenders_)
    if (c.rank.best && (!first || ranks_before(c.rank, first->rank, goal()))) first = &c;
  best_.reset();
  if (first)
    best_ = BestSoFar{first->rank.number, *first->rank.best, first->params, first->rank.best_step,
                      first->rank.broken};
}

const Json& ConsoleProgress::params_of(const scheduler::TrialSpec& spec) const {
  const auto it = setup_.params.find(spec.id);
  return it == setup_.params.end() ? spec.params : it->second;
}

std::string ConsoleProgress::erase_table(TerminalSize now) {
  std::size_t rows = 0;
  for (const std::size_t width : table_widths_) {
    const auto columns = static_cast<std::size_t>(std::max(now.columns, 1));
    // Re-wrapped by a terminal that reflows, when it got narrower than the line.
    rows += width > columns ? (width + columns - 1) / columns : 1;
  }
  table_widths_.clear();
  if (!setup_.live || rows == 0) return {};
  return "\r\x1b[" + std::to_string(rows) + "A\x1b[J";
}

std::string ConsoleProgress::table_text(TerminalSize size) {
  if (!setup_.live || closed_) return {};
  std::string text;
  const std::vector<std::string> lines =
      progress_table(view(std::chrono::steady_clock::now()), size);
  for (const std::string& line : lines) {
    text += line + "\n";
    table_widths_.push_back(display_width(line));
  }
  return text;
}

ProgressView ConsoleProgress::view(std::chrono::steady_clock::time_point now) const {
  ProgressView v;
  v.sweep_name = setup_.sweep_name;
  v.metric_name = setup_.metric_name;
  v.states = setup_.earlier;
  for (const auto& [state, n] : finished_states_) v.states[state] += n;
  v.states[TrialState::running] += static_cast<int>(running_.size());
  v.states[TrialState::queued] +=
      static_cast<int>(setup_.to_run - std::min(setup_.to_run, finished_ + running_.size()));
  for (const auto& [state, n] : v.states) v.trials += static_cast<std::size_t>(n);
  v.elapsed_seconds = seconds_between(run_started_, now);
  v.best = best_;
  for (const auto& [id, row] : running_) {
    RunningTrial t;
    t.number = row.number;
    t.device = row.device;
    t.epoch = row.epoch;
    t.loss = row.loss;
    t.metric = row.metric;
    t.fraction = row.fraction;
    t.seconds = seconds_between(row.started, now);
    t.params = row.params;
    v.running.push_back(std::move(t));
  }
  std::sort(v.running.begin(), v.running.end(),
            [](const RunningTrial& a, const RunningTrial& b) { return a.number < b.number; });
  v.finished.assign(recent_.begin(), recent_.end());
  v.param_keys = setup_.param_keys;
  return v;
}

void ConsoleProgress::print_above_table(const std::vector<std::string>& lines) {
  if (!setup_.live) {
    for (const std::string& line : lines) out_ << line << "\n";
    out_.flush();
    return;
  }
  const TerminalSize size = setup_.terminal_size();
  std::string text = erase_table(size);
  const auto width = static_cast<std::size_t>(std::max(size.columns - 1, 1));
  for (const std::string& line : lines)
    for (const std::string& part : wrap_words(printable(line), width)) text += part + "\n";
  text += table_text(size);
  out_ << text;
  out_.flush();
}

void ConsoleProgress::note(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::lock_guard lock(mutex_);
  print_above_table(lines);
}

void ConsoleProgress::on_started(const scheduler::TrialSpec& spec,
                                 const std::vector<scheduler::Device>& devices) {
  std::lock_guard lock(mutex_);
  Row row;
  row.number = spec.number;
  row.device = scheduler::devices_label(devices);
  row.params = params_of(spec);
  row.started = std::chrono::steady_clock::now();
  running_[spec.id] = row;
  if (!setup_.live)
    print_above_table(
        {"trial " + std::to_string(spec.number) + " started on " + row.device + ": " + spec.name});
}

void ConsoleProgress::on_metric(const scheduler::TrialSpec& spec,
                                const scheduler::MetricPoint& point) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(spec.id);
  if (it == running_.end()) return;
  Row& row = it->second;
  if (point.name == metric_names::kTrainLoss || point.name == metric_names::kLoss)
    row.loss = point.value;
  if (point.epoch > 0) row.epoch = point.epoch;
  if (point.name != setup_.metric_name) return;
  row.metric = point.value;
  row.score.add(point.step, point.value, goal());
  if (std::isfinite(point.value))
    offer(ranked(row.score, row.number, TrialState::running), row.params);
  if (!setup_.live && point.epoch > 0)
    print_above_table({"trial " + std::to_string(row.number) + " epoch " +
                       std::to_string(point.epoch) + ": " + setup_.metric_name + " " +
                       number_text(point.value, 4) + ", train_loss " + number_text(row.loss, 4)});
}

void ConsoleProgress::on_progress(const scheduler::TrialSpec& spec, double fraction,
                                  const std::string& /*text*/) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(spec.id);
  if (it == running_.end()) return;
  it->second.fraction = fraction;
}

void ConsoleProgress::on_finished(const scheduler::TrialSpec& spec,
                                  const scheduler::TrialOutcome& outcome,
                                  const std::optional<scheduler::Device>& device) {
  std::lock_guard lock(mutex_);
  // Interrupted before it started (Ctrl-C while it waited for a slot): it never ran and stays
  // queued for `sweep resume`, as the store keeps it, so it is neither finished nor interrupted.
  if (!device && outcome.state == TrialState::interrupted) {
    running_.erase(spec.id);
    print_above_table(
        {"trial " + std::to_string(spec.number) + " not started: stays queued for sweep resume"});
    return;
  }
  ++finished_;
  ++finished_states_[outcome.state];
  // A trial that broke keeps its values but falls behind every trial that did not: when it was
  // the best so far, the best is looked for again.
  if (const auto it = contenders_.find(spec.number);
      it != contenders_.end() && is_broken(outcome.state)) {
    it->second.rank.broken = true;
    if (best_ && best_->number == spec.number) pick_best();
  }
  FinishedTrial done;
  done.number = spec.number;
  done.state = outcome.state;
  done.params = params_of(spec);
  double last_metric = kNotReported;
  if (auto it = running_.find(spec.id); it != running_.end()) {
    done.seconds = seconds_between(it->second.started, std::chrono::steady_clock::now());
    done.metric = it->second.score.best.value_or(kNotReported);
    last_metric = it->second.metric;
    running_.erase(it);
  }
  recent_.push_back(done);
  if (recent_.size() > kRecentFinished) recent_.pop_front();

  std::string line =
      "trial " + std::to_string(spec.number) + " " + std::string(to_string(outcome.state));
  if (!std::isnan(done.seconds)) line += " in " + duration(done.seconds);
  if (setup_.live) {
    // Its values with the digits that tell them apart from the trials on screen.
    std::vector<const Json*> shown = {&done.params};
    for (const auto& [id, row] : running_) shown.push_back(&row.params);
    for (const FinishedTrial& t : recent_) shown.push_back(&t.params);
    if (!std::isnan(done.metric))
      line += ", " + setup_.metric_name + " " + significant(done.metric, 4);
    line += in_parentheses(printable(
        params_text(done.params, ParamNames::last_parts, param_digits(setup_.param_keys, shown))));
  } else {
    if (!std::isnan(last_metric))
      line += ", " + setup_.metric_name + " " + number_text(last_metric, 4);
    line += in_parentheses(spec.name);
  }
  const std::string count =
      "  [" + std::to_string(finished_) + "/" + std::to_string(setup_.to_run) + "]";
  if (!setup_.live) {
    if (!outcome.message.empty()) line += ": " + outcome.message;
    print_above_table({line + count});
    return;
  }
  // A message of several lines (a trainer's error output) stays several lines.
  std::vector<std::string> lines = {line + count};
  std::istringstream message(outcome.message);
  bool first = true;
  for (std::string part; std::getline(message, part); first = false)
    if (first)
      lines[0] = line + ": " + part + count;
    else
      lines.push_back("  " + part);
  print_above_table(lines);
}

void ConsoleProgress::redraw() {
  if (!setup_.live) return;
  std::lock_guard lock(mutex_);
  if (closed_) return;
  const TerminalSize size = setup_.terminal_size();
  std::string text = erase_table(size);  // first: it reads the widths table_text() replaces
  text += table_text(size);
  out_ << text;
  out_.flush();
}

void ConsoleProgress::clear() {
  std::lock_guard lock(mutex_);
  out_ << erase_table(setup_.terminal_size());
  closed_ = true;
  out_.flush();
}

}  // namespace sweep::run
