/*
 * expand.cpp — trials from the search space, each re-read from its own copy of the YAML tree.
 *
 * Re-reading (rather than poking the value into a parsed struct) is what makes every config key
 * sweepable with no per-key code, and gives a swept value exactly the checks and messages of a
 * value written in the file; the origin table points those messages at sweep.parameters.
 * Copying the tree with its marks means parsing the file again (yaml-cpp cannot copy marks), so a
 * trial is first read from a plain copy (YAML::Clone, no marks, several times faster) and read
 * again from a marked copy only when it has a problem to report.
 */
#include "sweep/config/expand.h"

#include <algorithm>
#include <mutex>

#include "common/format.h"
#include "common/json.h"
#include "sweep/config/map_reader.h"
#include "sweep/config/train_config_reader.h"
#include "sweep/config/train_config_writer.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config {

namespace {

// yaml-cpp does not promise that reading one tree from several threads is safe (lookups share
// reference-counted nodes); trials resolve one at a time, which costs nothing next to training.
std::mutex& resolve_mutex() {
  static std::mutex mutex;
  return mutex;
}

// Placeholders the scheduler fills when the trial starts (command_trial.h).
bool is_run_time_placeholder(const std::string& name) {
  return name == "trial_dir" || name == "trial_id" || name == "trial_number" ||
         name == "trial_name" || name == "device";
}

// Fills {placeholders} of an external command for display, and records each value in
// out.placeholders, spelled as the file spells it. {{ and }} are literal braces.
void fill(const SweepConfig& config, const TrialPoint& point, FilledCommand& filled,
          Diagnostics& diagnostics) {
  const YAML::Node command_node = find_path(config.tree->root, "trainer.command");
  const Location where = config.tree->where("trainer.command", command_node);
  const std::string& command = config.trainer->command;
  std::string& out = filled.command;
  filled.placeholders = sweep::Json::object();
  const std::vector<ParamSpec>& params = config.sweep.space.params;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if ((c == '{' || c == '}') && i + 1 < command.size() && command[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    const auto close = command.find('}', i);
    if (close == std::string::npos) {
      diagnostics.error(where, "trainer.command",
                        "unclosed '{' at character " + std::to_string(i + 1));
      return;
    }
    const std::string name = command.substr(i + 1, close - i - 1);
    i = close;
    if (is_run_time_placeholder(name)) {
      out += "{" + name + "}";
      continue;
    }
    std::string value;
    bool found = true;
    if (name == "trial") {
      value = std::to_string(point.number);
    } else if (name == "repeat") {
      value = std::to_string(point.repeat);
    } else if (name == "seed") {
      value = std::to_string(point.seed);
    } else if (name == "args_json") {  // W&B's ${args_json}: every parameter, one argument
      value = point.params.dump();
    } else {
      found = false;
      for (std::size_t p = 0; p < params.size() && !found; ++p)
        if (params[p].name == name) {
          value = point.texts[p];
          found = true;
        }
      // A config value: as the file spells it, else its default.
      if (!found)
        if (YAML::Node node = find_path(config.tree->root, canonical_path(name)); node.IsScalar()) {
          value = node.Scalar();
          found = true;
        }
      if (!found)
        if (YAML::Node node = find_path(to_yaml(config.base), canonical_path(name));
            node.IsScalar()) {
          value = node.Scalar();
          found = true;
        }
    }
    if (!found) {
      diagnostics.error(where, "trainer.command",
                        "placeholder {" + name +
                            "} names no swept parameter, config value, or {trial}, {repeat}, "
                            "{seed}, {args_json}, {trial_dir}");
      continue;
    }
    out += value;
    filled.placeholders[name] = value;
  }
}

// The trial's values written into `tree`, then the whole training config read from it.
void read_trial_config(const SweepConfig& config, const TrialPoint& point, ConfigTree tree,
                       Diagnostics& diagnostics, trainer::TrainConfig& out) {
  const SearchSpace& space = config.sweep.space;
  for (std::size_t i = 0; i < space.params.size(); ++i) {
    const ParamSpec& p = space.params[i];
    if (!p.sets_config_key) continue;
    if (const std::string problem = set_path(tree.root, p.name, from_json(point.params[p.name]));
        !problem.empty()) {
      diagnostics.error(p.where, "sweep.parameters." + p.name, problem);
      continue;
    }
    tree.origins[canonical_path(p.name)] = point.where[i];
  }
  TrainReadOptions options;
  options.check_data_files = !config.trainer.has_value();
  options.check_model_shapes = !config.trainer.has_value();
  MapReader top(tree, diagnostics, tree.root, "");
  read_train_config(top, out, options);
}

TrialPlan resolve(const SweepConfig& config, const TrialPoint& point, Diagnostics& diagnostics,
                  bool with_yaml) {
  std::lock_guard<std::mutex> lock(resolve_mutex());
  TrialPlan plan;
  plan.number = point.number;
  plan.repeat = point.repeat;
  plan.params = point.params;
  plan.placeholders = sweep::Json::object();

  bool sets_config_keys = false;
  for (const ParamSpec& p : config.sweep.space.params)
    sets_config_keys = sets_config_keys || p.sets_config_key;
  if (sets_config_keys) {
    Diagnostics quick;
    read_trial_config(config, point, config.tree->quick_clone(), quick, plan.config);
    if (!quick.empty()) {           // again, with marks, for messages that point at the file
      trainer::TrainConfig marked;  // read from defaults, as the quick read was
      read_trial_config(config, point, config.tree->clone(), diagnostics, marked);
      plan.config = std::move(marked);
    }
  } else {
    plan.config = config.base;  // nothing swept touches the config: no need to read it again
  }
  plan.seed = plan.config.training.seed + static_cast<std::uint64_t>(plan.repeat);
  plan.config.training.seed = plan.seed;

  if (config.trainer) {
    FilledCommand filled;
    fill(config, point, filled, diagnostics);
    plan.command = std::move(filled.command);
    plan.placeholders = std::move(filled.placeholders);
  }
  if (!with_yaml) return plan;
  const YAML::Node resolved = to_yaml(plan.config);
  YAML::Node document(YAML::NodeType::Map);
  document["name"] = config.name;
  for (const char* section : {"data", "model", "training"}) document[section] = resolved[section];
  if (config.trainer) {
    YAML::Node trainer(YAML::NodeType::Map);
    trainer["command"] = plan.command;
    trainer["metric_timeout"] = format_number(config.trainer->metric_timeout);
    document["trainer"] = trainer;
  }
  plan.resolved_yaml = emit_yaml(document);
  return plan;
}

// Trial `point` of a grid with parameter `param` set to its value number `value` instead.
TrialPoint with_value(const SweepConfig& config, TrialPoint point, std::size_t param,
                      std::size_t value) {
  const ParamSpec& p = config.sweep.space.params[param];
  point.params[p.name] = p.values[value];
  point.texts[param] = p.value_texts[value];
  point.where[param] = p.value_locations[value];
  return point;
}

Location parameters_location(const SweepConfig& config, const std::string& key) {
  return config.tree->where(key, find_path(config.tree->root, key));
}

}  // namespace

bool can_expand(const SweepConfig& config) {
  if (!config.tree) return false;
  if (config.sweep.method != "grid" && config.sweep.max_trials < 1) return false;
  for (const ParamSpec& p : config.sweep.space.params) {
    if (p.is_discrete() && p.values.empty()) return false;
    if (p.is_discrete() && p.value_texts.size() != p.values.size()) return false;
    if (config.sweep.method == "grid" && !p.is_discrete()) return false;
  }
  return true;
}

TrialPoint trial_point_from_draws(const SearchSpace& space, std::uint64_t base_training_seed,
                                  int repeats, std::uint64_t index,
                                  const std::vector<Draw>& draws) {
  TrialPoint point;
  point.number = static_cast<int>(index);
  point.repeat = static_cast<int>(index % static_cast<std::uint64_t>(std::max(repeats, 1)));
  point.params = sweep::Json::object();
  for (std::size_t i = 0; i < draws.size() && i < space.params.size(); ++i) {
    const ParamSpec& p = space.params[i];
    point.params[p.name] = draws[i].value;
    const auto v = static_cast<std::size_t>(draws[i].value_index);
    // One of the file's values: as the file spells it, where it stands (a space built in code
    // may have no texts or places: then as a drawn value).
    point.texts.push_back(draws[i].value_index >= 0 && v < p.value_texts.size()
                              ? p.value_texts[v]
                              : value_text(draws[i].value));
    if (draws[i].value_index >= 0 && v < p.value_locations.size()) {
      point.where.push_back(p.value_locations[v]);
    } else {
      Location where = p.where;
      where.drawn = true;
      point.where.push_back(where);
    }
  }
  // The seed as resolve_trial will find it: a swept training.seed, else the base config's.
  std::uint64_t seed = base_training_seed;
  for (const ParamSpec& p : space.params) {
    const sweep::Json& value = point.params[p.name];
    if (canonical_path(p.name) == "training.seed" && value.is_number_integer() &&
        value.get<std::int64_t>() >= 0)
      seed = value.get<std::uint64_t>();
  }
  point.seed = seed + static_cast<std::uint64_t>(point.repeat);
  return point;
}

TrialPoint trial_point_from_draws(const SweepConfig& config, std::uint64_t index,
                                  const std::vector<Draw>& draws) {
  return trial_point_from_draws(config.sweep.space, config.base.training.seed, config.sweep.repeats,
                                index, draws);
}

TrialPoint trial_point(const SweepConfig& config, std::uint64_t index) {
  const SearchSpace& space = config.sweep.space;
  const std::uint64_t point_index = index / static_cast<std::uint64_t>(config.sweep.repeats);
  if (config.sweep.method != "grid")  // random, and tpe's start-up (see expand.h)
    return trial_point_from_draws(config, index,
                                  sample_point(space, config.sweep.seed, point_index));
  const std::vector<std::size_t> indices = space.grid_point(point_index);
  std::vector<Draw> draws;
  draws.reserve(indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i)
    draws.push_back({space.params[i].values[indices[i]], static_cast<int>(indices[i])});
  return trial_point_from_draws(config, index, draws);
}

FilledCommand fill_command(const SweepConfig& config, const TrialPoint& point) {
  if (!config.trainer) throw Error("fill_command: the sweep has no trainer.command");
  FilledCommand filled;
  Diagnostics diagnostics;
  fill(config, point, filled, diagnostics);
  diagnostics.throw_if_any();
  return filled;
}

TrialPlan resolve_trial(const SweepConfig& config, const TrialPoint& point,
                        Diagnostics& diagnostics) {
  return resolve(config, point, diagnostics, true);
}

TrialPlan resolve_trial(const SweepConfig& config, std::uint64_t index) {
  if (!can_expand(config) || index >= config.trial_count())
    throw Error("resolve_trial: no trial " + std::to_string(index) + " in this sweep");
  Diagnostics diagnostics;
  TrialPlan plan = resolve_trial(config, trial_point(config, index), diagnostics);
  diagnostics.throw_if_any();
  return plan;
}

std::vector<TrialPlan> expand(const SweepConfig& config) {
  if (!can_expand(config))
    throw Error("expand: the SweepConfig was not made by a successful load_config");
  const std::uint64_t total = config.trial_count();
  if (total > kMaxTrials)
    throw Error("expand: " + std::to_string(total) + " trials is more than a sweep may hold");
  Diagnostics diagnostics;
  std::vector<TrialPlan> trials;
  trials.reserve(total);
  for (std::uint64_t index = 0; index < total; ++index)
    trials.push_back(resolve_trial(config, trial_point(config, index), diagnostics));
  diagnostics.throw_if_any();
  return trials;
}

void check_trials(const SweepConfig& config, Diagnostics& diagnostics) {
  if (!can_expand(config)) return;
  const std::uint64_t total = config.trial_count();
  if (total > kMaxTrials) {
    const bool random = config.sweep.method != "grid";  // random or tpe: max_trials is the count
    const std::string key = random ? "sweep.max_trials" : "sweep.parameters";
    const std::string count =
        total == UINT64_MAX ? "more than 18 quintillion" : std::to_string(total);
    diagnostics.error(parameters_location(config, key), key,
                      "the sweep has " + count + " trials (" + config.shape() +
                          "), more than the " + std::to_string(kMaxTrials) +
                          " one sweep may hold: " +
                          (random ? std::string("ask for fewer")
                                  : "set sweep.max_trials to run the first N, sample with "
                                    "method: random and max_trials, or split the sweep"));
    return;
  }
  // Until the problems fill what a user is shown: a config whose every trial has the same 100
  // problems would otherwise find them 2,000 times over, for nothing shown.
  const std::uint64_t one_by_one = std::min(total, kTrialsCheckedOneByOne);
  for (std::uint64_t index = 0; index < one_by_one && !diagnostics.full(); ++index)
    resolve(config, trial_point(config, index), diagnostics, false);
  if (one_by_one == total) return;
  // Beyond those: every value of every parameter once, with the first trial's other values.
  const TrialPoint first = trial_point(config, 0);
  const std::vector<ParamSpec>& params = config.sweep.space.params;
  for (std::size_t p = 0; p < params.size(); ++p)
    if (params[p].is_discrete())
      for (std::size_t v = 0; v < params[p].values.size() && !diagnostics.full(); ++v)
        resolve(config, with_value(config, first, p, v), diagnostics, false);
}

}  // namespace sweep::config
