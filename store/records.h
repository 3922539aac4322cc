/*
 * records.h — the plain structs the store reads and writes, one per table (plus the export table).
 *
 * Times are UTC seconds since the Unix epoch as double (REAL in SQLite), so that sub-second
 * timings survive and the database reads on its own with `datetime(x, 'unixepoch')`. A time that
 * has not happened yet is std::nullopt (NULL); text that was never set is "" (never NULL), so
 * callers have one "empty" to test for. Every member has an initializer (even `{}`), so callers
 * may use designated initializers naming only the fields they set, warning-free.
 */
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/trial_score.h"
#include "common/trial_state.h"
#include "common/words.h"

namespace sweep {

// ---- sweeps ---------------------------------------------------------------------------------

enum class SweepState { created, running, completed, interrupted, failed, cancelled };
Words<SweepState> words_of(SweepState);
std::string_view to_string(SweepState s);
std::optional<SweepState> parse_sweep_state(std::string_view s);

// MetricGoal: common/trial_score.h (the one rule of a trial's best value).
Words<MetricGoal> words_of(MetricGoal);
std::string_view to_string(MetricGoal g);
std::optional<MetricGoal> parse_metric_goal(std::string_view s);

// What create_sweep needs; the rest of a SweepRow is filled by the store.
struct SweepSpec {
  std::string name{};         // unique across the database
  std::string config_yaml{};  // the whole config file as the user gave it
  std::string config_path{};
  std::string metric_name{};  // e.g. "val_accuracy"
  MetricGoal metric_goal = MetricGoal::maximize;
  std::string devices{};  // e.g. "cuda:0,cuda:1" or "cpu x4"
};

struct SweepRow {
  std::int64_t id = 0;
  std::string name{}, config_yaml{}, config_path{}, metric_name{};
  MetricGoal metric_goal = MetricGoal::maximize;
  SweepState state = SweepState::created;
  std::string devices{};
  double created_at = 0;
  std::optional<double> started_at{}, finished_at{};
};

// list_sweeps(): a sweep with its trials counted by state (states with no trial are absent).
struct SweepSummary {
  SweepRow sweep;
  std::map<TrialState, std::int64_t> trials_by_state;
  std::int64_t trial_count = 0;
};

// ---- trials ---------------------------------------------------------------------------------

struct TrialSpec {
  std::int64_t number = 0;                     // 0-based, unique within the sweep
  sweep::Json params = sweep::Json::object();  // {"training.learning_rate": 0.01, ...}
  std::string config_yaml{};                   // the resolved config this trial trains with
  std::int64_t seed = 0;
  std::int64_t repeat = 0;    // which repetition of the same params
  std::string wait_reason{};  // why it is queued, if known ("waiting for a free GPU")
};

struct TrialRow {
  std::int64_t id = 0, sweep_id = 0, number = 0;
  TrialState state = TrialState::queued;
  std::string device{};
  sweep::Json params = sweep::Json::object();
  std::string config_yaml{};
  std::int64_t seed = 0, repeat = 0;
  double queued_at = 0;
  std::optional<double> started_at{}, finished_at{};
  std::string wait_reason{}, stop_reason{}, error{};
  std::int64_t attempts = 0;  // how many times the trial was started (claimed)
  std::string checkpoint_path{}, log_path{};
  sweep::Json summary = sweep::Json::object();
  double updated_at = 0;
};

// set_trial_state(): what to record with the new state; fields left unset keep their value.
struct TrialUpdate {
  std::optional<std::string> error{};
  std::optional<std::string> stop_reason{};
  std::optional<sweep::Json> summary{};
  std::optional<std::string> checkpoint_path{};
  std::optional<std::string> log_path{};
  std::optional<std::string> config_yaml{};  // the resolved config, known when the trial starts
};

// ---- metrics --------------------------------------------------------------------------------

// One point of one metric series. `value` may be NaN or ±Inf: stored as NULL plus a kind.
struct MetricPoint {
  std::int64_t trial_id = 0;
  std::string name{};     // "train_loss", "val_accuracy", ...
  std::int64_t step = 0;  // iteration (or epoch for per-epoch series); unique per trial and name
  std::optional<double> epoch{};  // fractional epoch at this step, when known
  double value = 0;
  double wall_time = 0;  // UTC seconds when measured
};

// best_trial(): the winning trial and the value that made it win.
struct BestTrial {
  TrialRow trial;
  double value = 0;       // best finite value of the sweep metric this trial reported
  std::int64_t step = 0;  // the step it was reported at
};

// ---- events ---------------------------------------------------------------------------------

struct EventRow {
  std::int64_t id = 0, sweep_id = 0;
  std::optional<std::int64_t> trial_id{};
  double time = 0;
  std::string kind{};  // short tag: "started", "stopped_early", "resumed", "warning", ...
  std::string message{};
};

// ---- jobs (the background queue) --------------------------------------------------------------

enum class JobState { queued, running, done, failed, cancelled };
Words<JobState> words_of(JobState);
std::string_view to_string(JobState s);
std::optional<JobState> parse_job_state(std::string_view s);
constexpr bool is_terminal(JobState s) {
  return s == JobState::done || s == JobState::failed || s == JobState::cancelled;
}

// Where a queued sweep runs and goes: a job carries them in its own columns.
struct JobTarget {
  std::string working_dir{};  // absolute: the worker runs the job from here; "" = unset
  std::string sweep_name{};   // the sweep's name (after --set / --name)
  std::string output_dir{};   // as in the config: relative to working_dir unless absolute
  std::vector<std::string> overrides{};  // --set as given (already applied in config_yaml)
  // A trial that killed its worker this many times is failed (--max-attempts; kept apart from
  // max_attempts, which grows when a worker hands the job back cleanly). 0: not recorded.
  std::int64_t trial_crash_limit = 0;

  bool operator==(const JobTarget&) const = default;
};

struct JobSpec {
  std::string config_path{};
  std::string config_yaml{};  // the config as submitted (the file may change afterwards)
  std::int64_t priority = 0;  // higher runs first; equal priority: oldest first
  // The claims the job is given: --max-attempts + 1, one more per clean hand-back
  // (release_job), so that attempts and max_attempts together tell hand-backs from lost
  // workers (sweep/queue/job_attempts.h). The store never fails a job on it: the worker that
  // claims the job after a loss judges it (sweep/queue/crash_recovery.h).
  std::int64_t max_attempts = 3;
  JobTarget target{};
};

struct JobRow {
  std::int64_t id = 0;
  std::optional<std::int64_t> sweep_id{};  // unused (a v1 column); the sweep is target.sweep_name
  std::string config_path{}, config_yaml{};
  std::int64_t priority = 0;
  JobState state = JobState::queued;
  std::string lease_owner{};  // "host:pid:n" of the worker holding it; "" when none
  std::optional<double> lease_expires_at{}, heartbeat_at{};
  std::int64_t attempts = 0;      // how many times a worker claimed it
  std::int64_t max_attempts = 3;  // JobSpec::max_attempts, grown by each clean hand-back
  double created_at = 0;
  std::optional<double> started_at{}, finished_at{};
  std::string error{};
  std::optional<std::int64_t> exit_code{};
  JobTarget target{};
};

// ---- export ---------------------------------------------------------------------------------

// A table of strings for CSV / terminal output: every row has header.size() cells.
struct ExportTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // number[r][c]: rows[r][c] is a number written as text (shortest(): 0.001, -2.5, nan, -inf),
  // not text of the user's or of a program: a CSV writer that guards text cells against
  // spreadsheet formulas leaves numbers as they are. Every row has header.size() flags.
  std::vector<std::vector<bool>> number;
};

}  // namespace sweep
