/*
 * sweep_cross_checks.cpp — the sweep section against the training section and the keys the
 * readers asked for (sweep_cross_checks.h).
 */
#include "sweep/config/sweep_cross_checks.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "common/format.h"
#include "common/json.h"
#include "scheduler/stopping/hyperband.h"
#include "sweep/config/suggest.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config {

namespace {

// The first epoch at which an early_terminate block (read_early_terminate's policy) can stop a
// trial: median's and ASHA's min_epochs, hyperband's first band.
std::int64_t first_decision_epoch(const sweep::Json& policy) {
  if (policy.contains("min_epochs")) return policy.at("min_epochs").get<std::int64_t>();
  if (policy.contains("min_iter")) return policy.at("min_iter").get<std::int64_t>();
  if (policy.contains("max_iter") && policy.contains("s")) try {
      return scheduler::hyperband_bands_from_max_iter(policy.at("max_iter").get<std::int64_t>(),
                                                      policy.value("eta", 3),
                                                      policy.at("s").get<int>())
          .front();
    } catch (const Error&) {
      // Refused where the block is read (read_early_terminate).
    }
  return 1;
}

// The most epochs a trial trains, and what says so: the largest value of a swept
// training.epochs (whatever the base config says, every trial sets its own), else the base's.
std::pair<std::int64_t, std::string> last_epoch(const SweepSpec& sweep,
                                                const trainer::TrainConfig& base) {
  for (const ParamSpec& p : sweep.space.params) {
    if (!p.sets_config_key || canonical_path(p.name) != "training.epochs") continue;
    double most = 0;
    bool any = false;
    if (p.is_discrete()) {
      for (const sweep::Json& v : p.values)
        if (v.is_number())
          most = any ? std::max(most, v.get<double>()) : v.get<double>(), any = true;
    } else {
      most = p.max, any = true;
    }
    if (any)
      return {static_cast<std::int64_t>(std::floor(most)), "the largest swept training.epochs"};
  }
  return {base.training.epochs, "training.epochs"};
}

}  // namespace

void check_sweep_against_training(MapReader& sweep_reader, const SweepSpec& sweep,
                                  const trainer::TrainConfig& base, bool external_trainer) {
  MapReader metric = sweep_reader.section("metric");
  if (!external_trainer && base.data.validation == trainer::Validation::none &&
      sweep.metric.name.rfind("val_", 0) == 0)
    metric.error("name", "metric " + sweep.metric.name +
                             " needs a validation set, but data.validation is none");
  // A regression set reports no accuracy (trainer/eval/batch_loss.h): a sweep on one would find
  // no trial's metric.
  const bool accuracy =
      sweep.metric.name == "val_accuracy" || sweep.metric.name == "train_accuracy";
  if (!external_trainer && base.data.task == trainer::Task::regression && accuracy) {
    const std::string text =
        "the data is a regression set (data.task: regression), which reports "
        "val_rmse, val_mae, val_r2 and train_mae, not " +
        sweep.metric.name;
    if (metric.has("name"))
      metric.error("name", text);
    else
      sweep_reader.error("metric", text +
                                       " (the default metric): name one, e.g. "
                                       "metric: {name: val_rmse, goal: minimize}");
  }
  if (sweep.early_terminate && !external_trainer) {
    const std::int64_t first = first_decision_epoch(sweep.early_terminate->policy);
    const auto [last, which] = last_epoch(sweep, base);
    MapReader early = sweep_reader.section("early_terminate");
    if (first > last)
      early.error("type", "its first decision is at epoch " + std::to_string(first) +
                              ", after the last epoch any trial trains (" + which + " " +
                              std::to_string(last) + "): nothing would be stopped");
  }
}

void map_flat_parameter_names(SweepSpec& sweep, const std::vector<std::string>& asked_keys,
                              const std::string& parameters_path, Diagnostics& diagnostics) {
  auto is_trainer_section = [](const std::string& section) {
    return section == "data" || section == "model" || section == "training";
  };
  for (ParamSpec& p : sweep.space.params) {
    if (p.sets_config_key || p.name.find('.') != std::string::npos) continue;
    std::set<std::string> candidates;
    std::vector<std::string> leaves;
    for (const std::string& key : asked_keys) {
      const std::vector<std::string> parts = split_dotted(key);
      if (parts.size() < 2 || !is_trainer_section(parts.front())) continue;
      leaves.push_back(parts.back());
      if (parts.back() == p.name) candidates.insert(key);
    }
    for (const auto& [where, canonical] : key_aliases())
      if (where.second == p.name && is_trainer_section(split_dotted(where.first).front()))
        candidates.insert(where.first + "." + canonical);
    std::size_t shallowest = SIZE_MAX;
    for (const std::string& key : candidates)
      shallowest = std::min(shallowest, split_dotted(key).size());
    std::vector<std::string> best;
    for (const std::string& key : candidates)
      if (split_dotted(key).size() == shallowest) best.push_back(key);
    const std::string path = parameters_path + "." + p.name;
    if (best.size() == 1) {
      p.name = best.front();
      p.sets_config_key = true;
    } else if (best.size() > 1) {
      diagnostics.error(
          p.where, path,
          "'" + p.name + "' could be " + join(best, " or ") + ": write the dotted name");
    } else {
      std::string text = "'" + p.name +
                         "' is no key of data, model or training (a flat name is looked up "
                         "there: learning_rate means training.learning_rate)";
      const std::string near = nearest(p.name, leaves);
      if (!near.empty()) text += "; did you mean '" + near + "'?";
      diagnostics.error(p.where, path,
                        text + "; only data.*, model.* and training.* keys (and " +
                            std::string(kGpusPerTrialKey) + ") can be swept");
    }
  }
}

void check_parameters_set_distinct_keys(const SweepSpec& sweep, Diagnostics& diagnostics) {
  const std::vector<ParamSpec>& params = sweep.space.params;
  for (std::size_t j = 0; j < params.size(); ++j) {
    if (!params[j].sets_config_key) continue;
    const std::string later = canonical_path(params[j].name);
    for (std::size_t i = 0; i < j; ++i) {
      if (!params[i].sets_config_key) continue;
      const std::string earlier = canonical_path(params[i].name);
      const auto inside = [](const std::string& key, const std::string& section) {
        return key.size() > section.size() && key.compare(0, section.size(), section) == 0 &&
               key[section.size()] == '.';
      };
      const Location& other = params[i].where;
      const std::string that =
          "the parameter " + (other.line > 0 ? "at line " + std::to_string(other.line) +
                                                   ", column " + std::to_string(other.column)
                                             : "of " + other.text());
      std::string text;
      if (later == earlier)
        text = "sets " + later + ", as " + that + " does";
      else if (inside(later, earlier) || inside(earlier, later))
        text = "sets " + later + ", and " + that + " sets " + earlier +
               (inside(later, earlier) ? ", which holds it" : ", inside it");
      if (text.empty()) continue;
      diagnostics.error(params[j].where, "",
                        text +
                            ": in every trial one would overwrite the other; "
                            "sweep one of them");
      break;
    }
  }
}

}  // namespace sweep::config
