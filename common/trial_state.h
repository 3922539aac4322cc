/*
 * trial_state.h — the states a trial moves through, shared by scheduler, store, CLI and report.
 * Stored as the lower-case text below (never as a number), so the database reads on its own.
 */
#pragma once

#include <optional>
#include <string_view>

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

constexpr std::string_view to_string(TrialState s) {
  switch (s) {
    case TrialState::queued:
      return "queued";
    case TrialState::running:
      return "running";
    case TrialState::completed:
      return "completed";
    case TrialState::failed:
      return "failed";
    case TrialState::diverged:
      return "diverged";
    case TrialState::stopped_early:
      return "stopped_early";
    case TrialState::cancelled:
      return "cancelled";
    case TrialState::interrupted:
      return "interrupted";
  }
  return "unknown";
}

constexpr std::optional<TrialState> parse_trial_state(std::string_view s) {
  for (auto st : {TrialState::queued, TrialState::running, TrialState::completed,
                  TrialState::failed, TrialState::diverged, TrialState::stopped_early,
                  TrialState::cancelled, TrialState::interrupted})
    if (to_string(st) == s) return st;
  return std::nullopt;
}

// Finished for good: never rerun by resume (failed ones only with --retry-failed).
constexpr bool is_terminal(TrialState s) {
  return s == TrialState::completed || s == TrialState::failed || s == TrialState::diverged ||
         s == TrialState::stopped_early || s == TrialState::cancelled;
}

}  // namespace sweep
