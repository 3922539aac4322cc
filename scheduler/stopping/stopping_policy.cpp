/*
 * stopping_policy.cpp — the `early_terminate` block → a policy. Strict about keys: a misspelt
 * `min_epoch` silently falling back to a default would stop trials the user meant to keep, so an
 * unknown key is an error that lists the accepted ones.
 */
#include "scheduler/stopping/stopping_policy.h"

#include <cmath>
#include <set>
#include <sstream>

#include "common/check.h"
#include "common/json.h"
#include "scheduler/stopping/asha.h"
#include "scheduler/stopping/goal.h"
#include "scheduler/stopping/hyperband.h"
#include "scheduler/stopping/median_rule.h"

namespace sweep::scheduler {

namespace detail {}  // namespace detail

MetricGoal parse_metric_goal(const std::string& text) {
  if (text == "maximize") return MetricGoal::maximize;
  if (text == "minimize") return MetricGoal::minimize;
  throw Error("metric goal must be 'maximize' or 'minimize', not '" + text + "'");
}

namespace {

void check_keys(const sweep::Json& block, const std::string& type,
                const std::set<std::string>& accepted) {
  for (const auto& [key, value] : block.items()) {
    if (accepted.contains(key)) continue;
    std::string list;
    for (const auto& name : accepted) list += (list.empty() ? "" : ", ") + name;
    throw Error("early_terminate: unknown key '" + key + "' for type " + type +
                " (accepted: " + list + ")");
  }
}

std::int64_t integer_key(const sweep::Json& block, const std::string& key, std::int64_t fallback,
                         std::int64_t minimum) {
  if (!block.contains(key)) return fallback;
  const auto& value = block.at(key);
  if (!value.is_number() || std::floor(value.get<double>()) != value.get<double>())
    throw Error("early_terminate." + key + " must be a whole number, not " + value.dump());
  const auto number = static_cast<std::int64_t>(value.get<double>());
  if (number < minimum)
    throw Error("early_terminate." + key + " must be >= " + std::to_string(minimum) + ", not " +
                std::to_string(number));
  return number;
}

}  // namespace

std::unique_ptr<StoppingPolicy> make_stopping_policy(const sweep::Json& early_terminate,
                                                     const std::string& metric, MetricGoal goal) {
  if (!early_terminate.is_object() || !early_terminate.contains("type") ||
      !early_terminate.at("type").is_string())
    throw Error("early_terminate needs a 'type': median, asha or hyperband");
  const std::string type = early_terminate.at("type").get<std::string>();
  const auto& block = early_terminate;

  if (type == "median") {
    check_keys(block, type, {"type", "min_epochs", "min_trials"});
    MedianRuleOptions options{metric, goal, integer_key(block, "min_epochs", 1, 1),
                              static_cast<int>(integer_key(block, "min_trials", 3, 1))};
    return std::make_unique<MedianStoppingRule>(options);
  }
  if (type == "asha") {
    check_keys(block, type, {"type", "min_epochs", "eta", "max_epochs"});
    AshaOptions options{metric, goal, integer_key(block, "min_epochs", 1, 1),
                        static_cast<int>(integer_key(block, "eta", 3, 2)),
                        integer_key(block, "max_epochs", 0, 0)};
    return std::make_unique<AshaRule>(options);
  }
  if (type == "hyperband") {
    check_keys(block, type, {"type", "min_iter", "max_iter", "s", "eta", "strict"});
    const int eta = static_cast<int>(integer_key(block, "eta", 3, 2));
    HyperbandOptions options{metric, goal, {}, eta};
    if (block.contains("strict")) {
      if (!block.at("strict").is_boolean())
        throw Error("early_terminate: hyperband's strict must be true or false");
      options.strict = block.at("strict").get<bool>();
    }
    if (block.contains("max_iter")) {
      if (block.contains("min_iter"))
        throw Error(
            "early_terminate: give either min_iter or max_iter (+ s) for hyperband, not both");
      if (!block.contains("s"))
        throw Error("early_terminate: hyperband with max_iter also needs s");
      options.bands =
          hyperband_bands_from_max_iter(integer_key(block, "max_iter", 1, 1), eta,
                                        static_cast<int>(integer_key(block, "s", 1, 1)));
    } else if (block.contains("min_iter")) {
      options.bands = hyperband_bands_from_min_iter(integer_key(block, "min_iter", 1, 1), eta);
    } else {
      throw Error("early_terminate: hyperband needs min_iter (or max_iter and s), as in W&B");
    }
    return std::make_unique<HyperbandRule>(options);
  }
  throw Error("early_terminate: unknown type '" + type + "' (accepted: median, asha, hyperband)");
}

}  // namespace sweep::scheduler
