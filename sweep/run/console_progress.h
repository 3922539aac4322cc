/*
 * console_progress.h — what `sweep run` shows while trials train.
 *
 * On a terminal: finished trials scroll by as one line each, and under them a table of the
 * running trials (epoch, loss, the sweep metric, a progress bar, ETA) is redrawn in place by
 * redraw(), which the run loop calls a few times a second. Not a terminal (a log file, CI): one
 * plain line per event — started, each epoch's validation, finished — and redraw() does nothing.
 * Events arrive on trial threads; everything is behind one mutex, and only the run loop's thread
 * draws the table, so lines never interleave.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <ostream>
#include <string>

#include "scheduler/event_sink.h"

namespace sweep::run {

class ConsoleProgress : public scheduler::EventSink {
 public:
  ConsoleProgress(std::ostream& out, bool live, std::string metric_name, std::size_t total_trials);

  void on_started(const scheduler::TrialSpec& spec,
                  const std::vector<scheduler::Device>& devices) override;
  void on_metric(const scheduler::TrialSpec& spec, const scheduler::MetricPoint& point) override;
  void on_progress(const scheduler::TrialSpec& spec, double fraction,
                   const std::string& text) override;
  void on_finished(const scheduler::TrialSpec& spec, const scheduler::TrialOutcome& outcome,
                   const std::optional<scheduler::Device>& device) override;

  // Prints a line above the table (a notice from the run loop).
  void note(const std::string& line);
  // Live mode: draws the table of running trials in place of the previous one.
  void redraw();
  // Live mode: removes the table (before the final summary).
  void clear();

 private:
  struct Row {
    std::int64_t number = 0;
    std::string device, params, progress_text;
    double fraction = 0;
    std::int64_t epoch = 0;
    double train_loss = std::numeric_limits<double>::quiet_NaN();
    double metric = std::numeric_limits<double>::quiet_NaN();
    std::chrono::steady_clock::time_point started;
  };
  void print_above_table(const std::string& line);  // lock held
  void erase_table();                               // lock held

  std::ostream& out_;
  const bool live_;
  const std::string metric_name_;
  const std::size_t total_;
  std::mutex mutex_;
  std::map<std::int64_t, Row> running_;  // by trial id
  std::size_t finished_ = 0;
  int table_lines_ = 0;  // lines of the table now on screen
};

}  // namespace sweep::run
