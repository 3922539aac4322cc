/*
 * console_progress.cpp — ANSI in place redraw: move the cursor up over the old table
 * (ESC[nF), clear to the end of the screen (ESC[J), print the new one. Nothing else on the
 * screen is touched, so scrolled-by lines stay.
 */
#include "sweep/run/console_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/format.h"
#include "common/trial_state.h"

namespace sweep::run {

namespace {

// NaN is how the table marks a value not reported yet.
std::string number_text(double value, int digits) {
  return std::isnan(value) ? "-" : fixed(value, digits);
}

std::string bar(double fraction, int width) {
  const int filled = static_cast<int>(std::lround(std::clamp(fraction, 0.0, 1.0) * width));
  std::string text(1, '[');
  text.append(static_cast<std::size_t>(filled), '#');
  text.append(static_cast<std::size_t>(width - filled), '.');
  text.push_back(']');
  return text;
}

}  // namespace

ConsoleProgress::ConsoleProgress(std::ostream& out, bool live, std::string metric_name,
                                 std::size_t total_trials)
    : out_(out), live_(live), metric_name_(std::move(metric_name)), total_(total_trials) {}

void ConsoleProgress::print_above_table(const std::string& line) {
  erase_table();
  out_ << line << "\n";
  out_.flush();
}

void ConsoleProgress::erase_table() {
  if (live_ && table_lines_ > 0) out_ << "\x1b[" << table_lines_ << "F\x1b[J";
  table_lines_ = 0;
}

void ConsoleProgress::note(const std::string& line) {
  std::lock_guard lock(mutex_);
  print_above_table(line);
}

void ConsoleProgress::on_started(const scheduler::TrialSpec& spec,
                                 const std::vector<scheduler::Device>& devices) {
  std::lock_guard lock(mutex_);
  Row row;
  row.number = spec.number;
  row.device = scheduler::devices_label(devices);
  row.params = spec.name;
  row.started = std::chrono::steady_clock::now();
  running_[spec.id] = row;
  if (!live_)
    print_above_table("trial " + std::to_string(spec.number) + " started on " + row.device + ": " +
                      spec.name);
}

void ConsoleProgress::on_metric(const scheduler::TrialSpec& spec,
                                const scheduler::MetricPoint& point) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(spec.id);
  if (it == running_.end()) return;
  Row& row = it->second;
  if (point.name == "train_loss" || point.name == "loss") row.train_loss = point.value;
  if (point.name == metric_name_) row.metric = point.value;
  if (point.epoch > 0) row.epoch = point.epoch;
  if (!live_ && point.name == metric_name_ && point.epoch > 0)
    print_above_table("trial " + std::to_string(row.number) + " epoch " +
                      std::to_string(point.epoch) + ": " + metric_name_ + " " +
                      number_text(point.value, 4) + ", train_loss " +
                      number_text(row.train_loss, 4));
}

void ConsoleProgress::on_progress(const scheduler::TrialSpec& spec, double fraction,
                                  const std::string& text) {
  std::lock_guard lock(mutex_);
  auto it = running_.find(spec.id);
  if (it == running_.end()) return;
  it->second.fraction = fraction;
  it->second.progress_text = text;
}

void ConsoleProgress::on_finished(const scheduler::TrialSpec& spec,
                                  const scheduler::TrialOutcome& outcome,
                                  const std::optional<scheduler::Device>& device) {
  std::lock_guard lock(mutex_);
  ++finished_;
  std::string line =
      "trial " + std::to_string(spec.number) + " " + std::string(to_string(outcome.state));
  if (auto it = running_.find(spec.id); it != running_.end()) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.started)
            .count();
    line += " in " + duration(seconds);
    if (!std::isnan(it->second.metric))
      line += ", " + metric_name_ + " " + number_text(it->second.metric, 4);
    running_.erase(it);
  }
  line += " (" + spec.name + ")";
  if (!outcome.message.empty()) line += ": " + outcome.message;
  line += "  [" + std::to_string(finished_) + "/" + std::to_string(total_) + "]";
  print_above_table(line);
}

void ConsoleProgress::redraw() {
  if (!live_) return;
  std::lock_guard lock(mutex_);
  erase_table();
  const auto now = std::chrono::steady_clock::now();
  char header[160];
  std::snprintf(header, sizeof header, "  %-6s %-8s %-6s %-10s %-12s %-22s %-8s %s", "trial",
                "device", "epoch", "loss", metric_name_.substr(0, 12).c_str(), "progress", "ETA",
                "params");
  out_ << header << "\n";
  int lines = 1;
  for (const auto& [id, row] : running_) {
    const double elapsed = std::chrono::duration<double>(now - row.started).count();
    const double eta = row.fraction > 0.01 ? elapsed * (1 - row.fraction) / row.fraction
                                           : std::numeric_limits<double>::quiet_NaN();
    char text[512];
    std::snprintf(text, sizeof text, "  %-6lld %-8s %-6lld %-10s %-12s %-22s %-8s %s",
                  static_cast<long long>(row.number), row.device.c_str(),
                  static_cast<long long>(row.epoch), number_text(row.train_loss, 4).c_str(),
                  number_text(row.metric, 4).c_str(), bar(row.fraction, 20).c_str(),
                  duration(eta).c_str(), row.params.substr(0, 60).c_str());
    out_ << text << "\n";
    ++lines;
  }
  out_ << "  " << finished_ << "/" << total_ << " trials finished, " << running_.size()
       << " running\n";
  ++lines;
  out_.flush();
  table_lines_ = lines;
}

void ConsoleProgress::clear() {
  std::lock_guard lock(mutex_);
  erase_table();
  out_.flush();
}

}  // namespace sweep::run
