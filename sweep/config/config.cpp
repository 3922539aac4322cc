/*
 * config.cpp — load_config: read, apply --set, read every section, then expand every trial.
 *
 * Base and trial problems go to one Diagnostics, which drops repeated lines: a typo in the base
 * is found again by every trial but reported once, and a bad swept value is reported next to it.
 */
#include "sweep/config/config.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include "common/format.h"
#include "sweep/config/expand.h"
#include "sweep/config/map_reader.h"
#include "sweep/config/suggest.h"
#include "sweep/config/sweep_spec_reader.h"
#include "sweep/config/train_config_reader.h"
#include "sweep/config/wandb_layout.h"
#include "sweep/config/yaml_guard.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config {

namespace {

bool is_safe_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.size() > 128) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool is_section_name(const std::string& key) {
  for (const char* section :
       {"data", "model", "training", "sweep", "resources", "trainer", "output"})
    if (key == section) return true;
  return false;
}

// The flags flag_override() stands for, and the keys they set.
constexpr std::pair<std::string_view, std::string_view> kTextFlags[] = {{"--name", "name"},
                                                                        {"--out", "output.dir"}};

// A flag's override (flag_override): its value set as text.
bool apply_flag_override(ConfigTree& tree, const std::string& assignment,
                         Diagnostics& diagnostics) {
  for (const auto& [flag, flag_key] : kTextFlags) {
    if (assignment.size() <= flag.size() || assignment.compare(0, flag.size(), flag) != 0 ||
        assignment[flag.size()] != '=')
      continue;
    const std::string key(flag_key), text = assignment.substr(flag.size() + 1);
    Location where;
    where.label = std::string(flag) + " " + (text.empty() ? "''" : text);
    if (invalid_utf8_at(text) != std::string::npos) {
      diagnostics.error(where, key, "the value is not UTF-8 text");
      return true;
    }
    const YAML::Node value(text);
    if (const std::string problem = set_path(tree.root, key, value); !problem.empty()) {
      diagnostics.error(where, key, problem);
      return true;
    }
    tree.sets.emplace_back(key, value);
    tree.origins[key] = where;
    return true;
  }
  return false;
}

void apply_override(ConfigTree& tree, const std::string& assignment, Diagnostics& diagnostics) {
  if (apply_flag_override(tree, assignment, diagnostics)) return;
  Location where;
  where.label = "--set " + assignment;
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    diagnostics.error(where, "", "expected KEY=VALUE, such as training.epochs=2");
    return;
  }
  const std::string key = assignment.substr(0, equals);
  const std::string text = assignment.substr(equals + 1);
  if (invalid_utf8_at(key) != std::string::npos) {
    diagnostics.error(where, "", "the key is not UTF-8 text");
    return;
  }
  YAML::Node value;
  if (text.empty()) {
    value = YAML::Node(std::string());
  } else {
    try {
      value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      diagnostics.error(where, key, "the value is not valid YAML: " + e.msg);
      return;
    }
    // The same rules as the file (tags, repeated keys, alias expansion), said about the value.
    Diagnostics yaml_problems;
    if (!check_yaml_text("", text, yaml_problems)) {
      for (const std::string& problem : yaml_problems.messages())
        diagnostics.error(where, key, problem.substr(problem.find(": ") + 2));
      return;
    }
  }
  // A whole section (or any map) replaced by null would silently mean "all defaults".
  if (value.IsNull()) {
    const YAML::Node existing = find_path(tree.root, canonical_path(key));
    if (is_section_name(key) ||
        (existing.IsDefined() && (existing.IsMap() || existing.IsSequence()))) {
      diagnostics.error(where, key,
                        "cannot set a section or list to null: set its keys instead, such as "
                        "--set " +
                            key + ".KEY=VALUE");
      return;
    }
  }
  if (const std::string problem = set_path(tree.root, key, value); !problem.empty()) {
    diagnostics.error(where, key, problem);
    return;
  }
  tree.sets.emplace_back(key, value);
  tree.origins[canonical_path(key)] = where;
}

}  // namespace

std::string flag_override(const std::string& flag, const std::string& value) {
  return flag + "=" + value;
}

void check_placement_overrides(const std::vector<std::string>& overrides) {
  std::vector<std::string> problems;
  for (const std::string& assignment : overrides) {
    const std::string key = canonical_path(assignment.substr(0, assignment.find('=')));
    if (key == "data.path" || key == "resources" || key.starts_with("resources.")) continue;
    problems.push_back("--set " + assignment +
                       ": a resumed sweep takes data.path and resources.* "
                       "(where its data lives, where it runs); '" +
                       key +
                       "' would change what its finished trials were trained with (start a new "
                       "sweep with sweep run --name)");
  }
  if (!problems.empty()) throw ConfigError(problems);
}

const std::vector<std::string>& builtin_metric_names() {
  // val_rmse, val_mae, val_r2 and train_mae: a regression set's (which reports no accuracy).
  static const std::vector<std::string> names = {"val_accuracy",   "val_loss", "train_loss",
                                                 "train_accuracy", "val_rmse", "val_mae",
                                                 "val_r2",         "train_mae"};
  return names;
}

std::uint64_t SweepConfig::trial_count() const {
  // max_trials points (random: samples, tpe: suggestions, grid: its first points), each run
  // `repeats` times. (A grid's cap once counted trials, so `max_trials: 3, repeats: 2` ran one
  // point once of its two seeds, where a random sweep ran 3 points twice each.)
  std::uint64_t points = sweep.method != "grid" ? static_cast<std::uint64_t>(sweep.max_trials)
                                                : sweep.space.grid_size();
  if (sweep.method == "grid" && sweep.max_trials > 0)
    points = std::min<std::uint64_t>(points, static_cast<std::uint64_t>(sweep.max_trials));
  const auto repeats = static_cast<std::uint64_t>(std::max(sweep.repeats, 1));
  // Saturating: a grid of 10^12 points times 10^9 repeats is "too many", not a wrapped count.
  return points > UINT64_MAX / repeats ? UINT64_MAX : points * repeats;
}

std::string SweepConfig::shape() const {
  std::string text;
  if (sweep.method == "random") {
    text = "random, " + std::to_string(sweep.max_trials) + " samples";
  } else if (sweep.method == "tpe") {
    // Each suggested from the results before it (bayes: W&B's name for it).
    text = std::string("tpe") + (sweep.method_as_written == "bayes" ? " for bayes" : "") +
           ", each suggested from the results before it";
  } else {
    std::string factors;
    for (const ParamSpec& p : sweep.space.params) {
      if (p.values.size() <= 1) continue;
      if (!factors.empty()) factors += " × ";
      factors += std::to_string(p.values.size());
    }
    text = "grid " + (factors.empty() ? std::string("1") : factors);
  }
  if (sweep.repeats > 1) text += ", " + std::to_string(sweep.repeats) + " repeats each";
  if (sweep.method == "grid" && sweep.max_trials > 0 &&
      sweep.space.grid_size() > static_cast<std::uint64_t>(sweep.max_trials))
    text += ", first " + std::to_string(sweep.max_trials) +
            (sweep.repeats > 1 ? " points" : std::string());
  return text;
}

SweepConfig load_config_text(const std::string& text, const std::string& path,
                             const std::vector<std::string>& overrides) {
  Diagnostics diagnostics;
  auto tree = std::make_shared<ConfigTree>();
  tree->file = path;
  tree->text = text;
  tree->root = parse_yaml(path, text, diagnostics);
  diagnostics.throw_if_any();
  if (tree->root.IsNull() || !tree->root.IsDefined()) {
    // An empty or comment-only file would otherwise run every default (full Fashion-MNIST).
    Location whole;
    whole.file = path;
    diagnostics.error(whole, "",
                      "the config is empty (no YAML besides comments): it needs at least the "
                      "sections it changes, such as sweep: {parameters: ...} (see "
                      "configs/quickstart.yaml)");
    diagnostics.throw_if_any();
  } else if (!tree->root.IsMap()) {
    diagnostics.error(tree->at_mark(tree->root.Mark()), "",
                      "a config is a map of sections (name, data, model, training, sweep, ...), "
                      "got " +
                          describe_node(tree->root));
    diagnostics.throw_if_any();
  }
  for (const std::string& assignment : overrides) apply_override(*tree, assignment, diagnostics);

  SweepConfig config;
  config.path = path;
  config.source_text = text;
  config.overrides = overrides;
  config.name = std::filesystem::path(path).stem().string();

  // W&B's layout (method, parameters, program, ... at the top level) becomes sweep: and trainer:
  // sections; its keys keep their names in messages (parameters.lr, not sweep.parameters.lr).
  const bool wandb = adopt_wandb_layout(*tree, diagnostics);
  MapReader top(*tree, diagnostics, tree->root, "");
  MapReader sweep_reader =
      wandb ? MapReader(*tree, diagnostics, top.node("sweep"), "") : top.section("sweep");
  if (top.text("name", config.name) && config.name.empty())
    top.error("name", "the name is empty: it names the directory runs/NAME/");
  else if (top.has("name") && !is_safe_name(config.name))
    top.error("name", "'" + config.name +
                          "' cannot name a directory under runs/: use letters, digits, '-', '_' "
                          "and '.'");
  read_external_trainer(top.section("trainer"), config.trainer);
  const bool external = config.trainer.has_value();
  read_sweep_spec(sweep_reader, config.sweep, external);
  read_resources(top.section("resources"), config.resources);
  MapReader output = top.section("output");
  output.text("dir", config.output_dir);
  if (output.has("dir") && config.output_dir.empty()) output.error("dir", "the directory is empty");
  output.finish();
  TrainReadOptions options;
  options.check_data_files = !external;
  options.check_model_shapes = !external;
  std::vector<std::string> asked_keys;  // the keys the readers take: W&B's flat names map to them
  tree->asked_keys = &asked_keys;
  read_train_config(top, config.base, options);
  tree->asked_keys = nullptr;
  top.finish();
  if (!external)
    map_flat_parameter_names(config.sweep, asked_keys, sweep_reader.path_of("parameters"),
                             diagnostics);
  check_parameters_set_distinct_keys(config.sweep, diagnostics);
  check_sweep_against_training(sweep_reader, config.sweep, config.base, external);
  if (wandb && !sweep_reader.section("metric").has("goal") && config.sweep.metric.maximize())
    diagnostics.warn(sweep_reader.where("metric"), sweep_reader.path_of("metric"),
                     "no goal: W&B would minimize " + config.sweep.metric.name +
                         "; sweep maximizes it (its name has no 'loss' or 'error'): give goal: "
                         "to say which");

  // Every trial is re-read and re-checked; problems the base shares with its trials are the
  // same lines and are reported once.
  config.tree = tree;
  check_trials(config, diagnostics);
  diagnostics.throw_if_any();
  config.warnings = diagnostics.warnings();
  return config;
}

std::string effective_yaml(const SweepConfig& config) {
  if (config.overrides.empty() || !config.tree) return config.source_text;
  std::string text = "# " + config.path + " with";
  for (const std::string& assignment : config.overrides)
    text += (assignment.rfind("--", 0) == 0 ? " " : " --set ") + assignment;
  return text + "\n" + emit_yaml(config.tree->root);
}

SweepConfig load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return load_config_text(read_config_file(path), path, overrides);
}

std::string read_config_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) throw ConfigError({printable(path) + ": no such file"});
  if (fs::is_directory(status))
    throw ConfigError({printable(path) +
                       ": is a directory, not a config file (give a .yaml file, such as "
                       "configs/quickstart.yaml)"});
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError({printable(path) + ": cannot be read (" + std::strerror(errno) + ")"});
  // Read at most one byte past the limit: /dev/zero or a huge file must not fill the memory.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad())
    throw ConfigError({printable(path) + ": cannot be read (" + std::strerror(errno) + ")"});
  return text;
}

}  // namespace sweep::config
