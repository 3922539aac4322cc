/*
 * progress_table.h — the live table of `sweep run` as lines of text, for a terminal of a given
 * size; a pure function of what is going on (ConsoleProgress collects that and draws it).
 *
 * Like Ray Tune's status table, top to bottom (here 90 columns wide):
 *
 *   sweep ra: 12 trials | 2 running, 3 completed, 1 stopped_early, 6 queued | elapsed 0m41s
 *   best: trial 2, val_loss 0.4123 (learning_rate=0.00316 batch_size=64)
 *   running  device  epoch  loss    val_loss  progress                     ETA    lr...
 *         4  cpu:0   2      0.5123  0.4456    [########............]  40%  0m12s  0.0...
 *   finished  state          val_loss  time   learning_rate  batch_size
 *          3  stopped_early  0.6012    0m05s  0.0457         64
 *
 * Every line is shorter than the terminal is wide (a character in the last column may wrap the
 * line): the header splits in two, the running trials' table narrows (a shorter progress bar,
 * then the percentage alone, then no device and no loss column), and what still does not fit is
 * cut with "...". There are at most rows - 2 lines, so the table never scrolls the screen: running
 * trials that do not fit end in "... and N more running", and finished ones are shown only in
 * the rows left over. Parameter values are written with the fewest significant digits (3 to 6)
 * that tell apart the values shown in their column.
 */
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/json.h"
#include "common/trial_state.h"
#include "sweep/run/terminal_size.h"

namespace sweep::run {

inline constexpr double kNotReported = std::numeric_limits<double>::quiet_NaN();

struct RunningTrial {
  std::int64_t number = 0;
  std::string device;
  std::int64_t epoch = 0;  // epochs finished
  double loss = kNotReported, metric = kNotReported;
  double fraction = 0;  // of its training, 0..1
  double seconds = 0;   // since it started
  Json params = Json::object();
};

struct FinishedTrial {
  std::int64_t number = 0;
  TrialState state = TrialState::completed;
  double metric = kNotReported;   // the best value it reported
  double seconds = kNotReported;  // how long it ran (not known for a trial that never started)
  Json params = Json::object();
};

struct BestSoFar {
  std::int64_t number = 0;
  double value = 0;
  Json params = Json::object();
  std::int64_t step = 0;  // where it reached value (ties go to the earlier step)
  bool broken = false;    // the trial failed or diverged (common/trial_score.h ranks it last)
};

struct ProgressView {
  std::string sweep_name, metric_name;
  std::size_t trials = 0;               // in the sweep
  std::map<TrialState, int> states;     // trials in each state, queued included
  double elapsed_seconds = 0;           // since this run started
  std::optional<BestSoFar> best;        // the best value of the metric any trial reported
  std::vector<RunningTrial> running;    // by trial number
  std::vector<FinishedTrial> finished;  // the most recent last
  std::vector<std::string> param_keys;  // the swept parameters, in the config's order
};

std::vector<std::string> progress_table(const ProgressView& view, TerminalSize size);

// Digits per parameter of `keys` that tell apart the floating-point values in `params`.
ParamDigits param_digits(const std::vector<std::string>& keys,
                         const std::vector<const Json*>& params);

}  // namespace sweep::run
