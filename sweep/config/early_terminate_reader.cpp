/*
 * early_terminate_reader.cpp — the sweep's `early_terminate` block, checked against the
 * scheduler's own bounds (hyperband's bands) before anything runs.
 */
#include "sweep/config/early_terminate_reader.h"

#include "common/json.h"
#include "scheduler/stopping/hyperband.h"
#include "scheduler/stopping/stopping_policy.h"

namespace sweep::config {

void read_early_terminate(MapReader r, std::optional<EarlyTerminateSpec>& out) {
  if (!r.present()) return;
  const std::size_t errors_before = r.diagnostics().error_count();
  EarlyTerminateSpec spec;
  if (!r.choice("type", spec.type, {"median", "asha", "hyperband"}, "early_terminate type")) {
    if (!r.has("type")) r.error("type", "early_terminate needs type: median, asha or hyperband");
    return r.finish();
  }
  spec.policy["type"] = spec.type;
  // (accepted key, the scheduler's key, lowest value) per type; other keys are reported unknown.
  struct Key {
    const char* name;
    const char* policy_key;
    int lowest;
  };
  std::vector<Key> keys;
  if (spec.type == "median") {
    keys = {{"min_epochs", "min_epochs", 1},
            {"grace_period", "min_epochs", 1},
            {"min_trials", "min_trials", 1}};
  } else if (spec.type == "asha") {
    keys = {{"min_epochs", "min_epochs", 1},   {"min_iter", "min_epochs", 1},
            {"grace_period", "min_epochs", 1}, {"eta", "eta", 2},
            {"max_epochs", "max_epochs", 0},   {"max_iter", "max_epochs", 0}};
  } else {
    keys = {{"min_iter", "min_iter", 1}, {"min_epochs", "min_iter", 1}, {"eta", "eta", 2},
            {"max_iter", "max_iter", 1}, {"max_epochs", "max_iter", 1}, {"s", "s", 1}};
  }
  for (const Key& key : keys) {
    int value = 0;
    if (!r.integer(key.name, value, Range::at_least(key.lowest))) continue;
    if (spec.policy.contains(key.policy_key)) {
      r.error(key.name, std::string("gives ") + key.policy_key + " a second time");
      continue;
    }
    spec.policy[key.policy_key] = value;
  }
  // W&B's strict: compare the trial's value AT the band (the original algorithm), not its best
  // so far. Only hyperband takes it.
  if (spec.type == "hyperband") {
    bool strict = false;
    if (r.boolean("strict", strict)) spec.policy["strict"] = strict;
  }
  r.finish();
  if (spec.type == "hyperband") {
    const bool by_min = spec.policy.contains("min_iter");
    const bool by_max = spec.policy.contains("max_iter") || spec.policy.contains("s");
    if (by_min && by_max)
      r.error("type",
              "hyperband takes either min_iter (and eta) or max_iter and s (and eta), "
              "not both");
    else if (by_max && !(spec.policy.contains("max_iter") && spec.policy.contains("s")))
      r.error("type", "hyperband with max_iter also needs s (and the other way round)");
    else if (!by_min && !by_max)
      r.error("type", "hyperband needs min_iter (or max_iter and s), as in W&B");
  }
  if (spec.type == "asha" && spec.policy.value("max_epochs", 0) > 0 &&
      spec.policy.value("max_epochs", 0) <= spec.policy.value("min_epochs", 1))
    r.error(r.has("max_iter") ? "max_iter" : "max_epochs",
            "ASHA's rungs end before max_epochs " +
                std::to_string(spec.policy.value("max_epochs", 0)) +
                ", and its first is at min_epochs " +
                std::to_string(spec.policy.value("min_epochs", 1)) +
                ": there would be none, and nothing would be stopped");
  // What the sweep will build from this block (run_sweep.cpp), built now: whatever it would
  // refuse is refused here, by `sweep validate` too, before a sweep's directory exists.
  if (r.diagnostics().error_count() == errors_before) try {
      scheduler::make_stopping_policy(spec.policy, "metric", scheduler::MetricGoal::maximize);
    } catch (const Error& e) {
      r.error("type", e.what());
    }
  out = spec;
}

}  // namespace sweep::config
