/*
 * trial_state.h — the states a trial moves through, shared by scheduler, store, CLI and report.
 * Stored as the lower-case text below (never as a number), so the database reads on its own.
 */
#pragma once

#include <optional>
#include <string_view>

#include "common/words.h"

namespace sweep {

enum class TrialState {
  queued,  // waiting for a device slot (the store keeps why)
  running,
  completed,
  failed,         // threw, ran out of memory, timed out, external program exited non-zero
  diverged,       // loss became NaN / Inf
  stopped_early,  // stopped by a rule: patience, median, ASHA (the store keeps which)
  cancelled,      // by the user
  interrupted,    // Ctrl-C / worker shutdown: has a checkpoint, resumable
};

inline constexpr Word<TrialState> kTrialStateWords[] = {
    {TrialState::queued, "queued"},       {TrialState::running, "running"},
    {TrialState::completed, "completed"}, {TrialState::failed, "failed"},
    {TrialState::diverged, "diverged"},   {TrialState::stopped_early, "stopped_early"},
    {TrialState::cancelled, "cancelled"}, {TrialState::interrupted, "interrupted"}};
constexpr Words<TrialState> words_of(TrialState) {
  return {kTrialStateWords, sizeof kTrialStateWords / sizeof kTrialStateWords[0]};
}

constexpr std::string_view to_string(TrialState s) { return name_of(s); }
constexpr std::optional<TrialState> parse_trial_state(std::string_view s) {
  return parse_word<TrialState>(s);
}

// Finished for good: never rerun by resume (failed ones only with --retry-failed).
constexpr bool is_terminal(TrialState s) {
  return s == TrialState::completed || s == TrialState::failed || s == TrialState::diverged ||
         s == TrialState::stopped_early || s == TrialState::cancelled;
}

// Ended without a result to pick: a failed or diverged trial keeps the values it reported before
// it broke, but never wins a sweep while another trial has a value, and a sweep whose best value
// comes from one has no successful trial. (Store::best_trial and the report rank by it.)
constexpr bool is_broken(TrialState s) {
  return s == TrialState::failed || s == TrialState::diverged;
}

}  // namespace sweep
