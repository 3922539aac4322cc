/*
 * expand.cpp — trials from the search space, each re-read from its own copy of the YAML tree.
 *
 * Re-reading (rather than poking the value into a parsed struct) is what makes every config key
 * sweepable with no per-key code, and gives a swept value exactly the checks and messages of a
 * value written in the file; the origin table points those messages at sweep.parameters.
 */
#include "sweep/expand.h"

#include "sweep/map_reader.h"
#include "sweep/train_config_reader.h"
#include "sweep/train_config_writer.h"
#include "sweep/yaml_tree.h"

namespace sweep::config {

namespace {

struct PointValue {
  nlohmann::ordered_json value;
  Location where;
};

// Placeholders the scheduler fills when the trial starts (command_trial.h).
bool is_run_time_placeholder(const std::string& name) {
  return name == "trial_dir" || name == "trial_id" || name == "trial_number" ||
         name == "trial_name" || name == "device";
}

// Fills {placeholders} of an external command for display, and records each value in
// plan.placeholders. {{ and }} are literal braces.
std::string fill_command(const std::string& command, const YAML::Node& resolved,
                         const nlohmann::ordered_json& params, TrialPlan& plan,
                         const Location& where, Diagnostics& diagnostics) {
  std::string out;
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
      return out;
    }
    const std::string name = command.substr(i + 1, close - i - 1);
    i = close;
    std::string value;
    if (is_run_time_placeholder(name)) {
      out += "{" + name + "}";
      continue;
    } else if (name == "trial") {
      value = std::to_string(plan.number);
    } else if (name == "repeat") {
      value = std::to_string(plan.repeat);
    } else if (name == "seed") {
      value = std::to_string(plan.seed);
    } else if (params.contains(name)) {
      value = format_value(params[name]);
    } else if (YAML::Node node = find_path(resolved, canonical_path(name)); node.IsScalar()) {
      value = node.Scalar();
    } else {
      diagnostics.error(where, "trainer.command",
                        "placeholder {" + name +
                            "} names no swept parameter, config value, or {trial}, {repeat}, "
                            "{seed}, {trial_dir}");
      continue;
    }
    out += value;
    plan.placeholders[name] = value;
  }
  return out;
}

std::vector<PointValue> point_values(const SweepConfig& config, std::uint64_t point) {
  const SearchSpace& space = config.sweep.space;
  std::vector<PointValue> values;
  if (config.sweep.method == "random") {
    const std::vector<Draw> draws = sample_point(space, config.sweep.seed, point);
    for (std::size_t i = 0; i < draws.size(); ++i) {
      const ParamSpec& p = space.params[i];
      Location where = p.where;
      if (draws[i].value_index >= 0) {
        where = p.value_locations[static_cast<std::size_t>(draws[i].value_index)];
      } else {
        where.drawn = true;
      }
      values.push_back({draws[i].value, where});
    }
  } else {
    const std::vector<std::size_t> indices = space.grid_point(point);
    for (std::size_t i = 0; i < indices.size(); ++i)
      values.push_back(
          {space.params[i].values[indices[i]], space.params[i].value_locations[indices[i]]});
  }
  return values;
}

}  // namespace

std::string format_value(const nlohmann::ordered_json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) return format_number(value.get<double>());
  return value.dump();
}

std::string format_params(const nlohmann::ordered_json& params) {
  std::string text;
  for (const auto& [name, value] : params.items()) {
    if (!text.empty()) text += ' ';
    text += name + "=" + format_value(value);
  }
  return text;
}

bool can_expand(const SweepConfig& config) {
  if (!config.tree) return false;
  if (config.sweep.method == "random" && config.sweep.max_trials < 1) return false;
  for (const ParamSpec& p : config.sweep.space.params) {
    if (p.is_discrete() && p.values.empty()) return false;
    if (config.sweep.method == "grid" && !p.is_discrete()) return false;
  }
  return true;
}

std::vector<TrialPlan> expand(const SweepConfig& config) {
  if (!can_expand(config))
    throw Error("expand: the SweepConfig was not made by a successful load_config");
  Diagnostics diagnostics;
  std::vector<TrialPlan> trials = expand(config, diagnostics);
  diagnostics.throw_if_any();
  return trials;
}

std::vector<TrialPlan> expand(const SweepConfig& config, Diagnostics& diagnostics) {
  if (!can_expand(config)) return {};
  const SearchSpace& space = config.sweep.space;
  const std::uint64_t total = config.trial_count();
  const auto repeats = static_cast<std::uint64_t>(config.sweep.repeats);
  const bool external = config.trainer.has_value();
  TrainReadOptions options;
  options.check_data_files = !external;

  bool sets_config_keys = false;
  for (const ParamSpec& p : space.params) sets_config_keys = sets_config_keys || p.sets_config_key;

  std::vector<TrialPlan> trials;
  trials.reserve(total);
  for (std::uint64_t index = 0; index < total; ++index) {
    const std::uint64_t point = index / repeats;
    TrialPlan plan;
    plan.number = static_cast<int>(index);
    plan.placeholders = nlohmann::json::object();
    plan.repeat = static_cast<int>(index % repeats);

    const std::vector<PointValue> values = point_values(config, point);
    plan.params = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < values.size(); ++i)
      plan.params[space.params[i].name] = values[i].value;
    if (sets_config_keys) {
      ConfigTree tree = config.tree->clone();
      for (std::size_t i = 0; i < values.size(); ++i) {
        const ParamSpec& p = space.params[i];
        if (!p.sets_config_key) continue;
        if (const std::string problem = set_path(tree.root, p.name, from_json(values[i].value));
            !problem.empty()) {
          diagnostics.error(p.where, "sweep.parameters." + p.name, problem);
          continue;
        }
        tree.origins[canonical_path(p.name)] = values[i].where;
      }
      MapReader top(tree, diagnostics, tree.root, "");
      read_train_config(top, plan.config, options);
    } else {
      plan.config = config.base;  // nothing swept touches the config: no need to read it again
    }
    plan.seed = plan.config.training.seed + static_cast<std::uint64_t>(plan.repeat);
    plan.config.training.seed = plan.seed;

    YAML::Node resolved = to_yaml(plan.config);
    if (config.trainer) {
      const YAML::Node command_node = find_path(config.tree->root, "trainer.command");
      plan.command = fill_command(config.trainer->command, resolved, plan.params, plan,
                                  config.tree->where("trainer.command", command_node), diagnostics);
    }
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
    trials.push_back(std::move(plan));
  }
  return trials;
}

}  // namespace sweep::config
