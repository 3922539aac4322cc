/*
 * console_progress.h — what `sweep run` shows while trials train.
 *
 * On a terminal: finished trials and notices scroll by above a live table (progress_table.h:
 * counts per state, the best trial so far, elapsed time, the running trials, the last finished
 * ones) that is redrawn in place, at the terminal's size read again for every drawing, so a
 * resized window is drawn at its new width at the next redraw (the run loop calls redraw() a few
 * times a second). No line reaches the terminal's last column: a line the terminal wrapped would
 * take two rows, and the cursor-up over the old table would miss one.
 * Not a terminal (a log file, CI): one plain line per event — started, each epoch's validation,
 * finished — with parameters written exactly, and redraw() does nothing.
 * Events arrive on trial threads; everything is behind one mutex and each drawing is one write,
 * so lines never interleave.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/trial_score.h"
#include "common/trial_state.h"
#include "scheduler/event_sink.h"
#include "sweep/run/progress_table.h"
#include "sweep/run/terminal_size.h"

namespace sweep::run {

struct ConsoleSetup {
  bool live = false;  // a terminal: the table redrawn in place
  std::string sweep_name, metric_name;
  bool maximize = false;                // the metric's goal, for the best trial so far
  std::size_t to_run = 0;               // trials this run runs
  std::map<TrialState, int> earlier;    // the sweep's other trials by state (a resumed sweep)
  std::optional<BestSoFar> best;        // the best of those (Store::best_trial)
  std::vector<std::string> param_keys;  // the swept parameters, in the config's order
  // Trial id → its swept values as numbers (an external command trial's spec carries them as
  // placeholder text). A trial not in it shows its spec's params.
  std::map<std::int64_t, Json> params;
  std::function<TerminalSize()> terminal_size = [] { return TerminalSize{}; };
};

class ConsoleProgress : public scheduler::EventSink {
 public:
  ConsoleProgress(std::ostream& out, ConsoleSetup setup);

  void on_started(const scheduler::TrialSpec& spec,
                  const std::vector<scheduler::Device>& devices) override;
  void on_metric(const scheduler::TrialSpec& spec, const scheduler::MetricPoint& point) override;
  void on_progress(const scheduler::TrialSpec& spec, double fraction,
                   const std::string& text) override;
  void on_finished(const scheduler::TrialSpec& spec, const scheduler::TrialOutcome& outcome,
                   const std::optional<scheduler::Device>& device) override;

  // Prints `text` above the table (a notice from the run loop; several lines allowed). On a
  // terminal its lines are broken at spaces to fit the width.
  void note(const std::string& text);
  // Live mode: draws the table in place of the previous one.
  void redraw();
  // Live mode: removes the table for good (before the final summary).
  void clear();

 private:
  struct Row {
    std::int64_t number = 0;
    std::string device;
    Json params;
    double fraction = 0;
    std::int64_t epoch = 0;
    double loss = kNotReported, metric = kNotReported;  // the latest values
    TrialScore score;                                   // of the sweep's metric
    std::chrono::steady_clock::time_point started;
  };
  // The best so far is the first of every trial's best by common/trial_score.h's rule (failed and
  // diverged last, ties to the earlier step, then the lower number), as `sweep best` ranks.
  struct Contender {
    RankedTrial rank;
    Json params;
  };
  MetricGoal goal() const;
  static RankedTrial rank_of(const BestSoFar& best);
  void offer(const RankedTrial& rank, const Json& params);  // lock held: a trial's best improved
  void pick_best();                                         // lock held: over every contender
  const Json& params_of(const scheduler::TrialSpec& spec) const;
  ProgressView view(std::chrono::steady_clock::time_point now) const;  // lock held
  // Erases the table, prints `lines` (live: each broken to the width), draws the table again.
  void print_above_table(const std::vector<std::string>& lines);  // lock held
  std::string erase_table(TerminalSize now);                      // lock held
  std::string table_text(TerminalSize size);                      // lock held

  std::ostream& out_;
  const ConsoleSetup setup_;
  const std::chrono::steady_clock::time_point run_started_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::map<std::int64_t, Row> running_;        // by trial id
  std::map<TrialState, int> finished_states_;  // of this run
  std::size_t finished_ = 0;
  std::deque<FinishedTrial> recent_;              // the last few finished, oldest first
  std::map<std::int64_t, Contender> contenders_;  // by trial number, each trial's best
  std::optional<BestSoFar> best_;
  std::vector<std::size_t> table_widths_;  // of the lines of the table now on screen
  bool closed_ = false;                    // clear() was called: no table any more
};

}  // namespace sweep::run
