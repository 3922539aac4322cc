/*
 * wandb_layout.cpp — see wandb_layout.h. The rewrite moves nodes, never copies text, so marks
 * (line and column) survive; the command template built from `program` + `command` has no mark of
 * its own and is given the `command` (or `program`) key's place in the origin table.
 */
#include "sweep/config/wandb_layout.h"

#include <string_view>

#include "sweep/config/suggest.h"

namespace sweep::config {

namespace {

// Top-level keys that make a file W&B's layout; each moves under `sweep` as it is.
constexpr const char* kSweepKeys[] = {"method", "metric", "parameters", "early_terminate",
                                      "run_cap"};
// W&B keys for its service only: accepted, with a warning that they do nothing here.
constexpr const char* kServiceKeys[] = {"project",    "entity",     "description",
                                        "controller", "apiVersion", "kind"};
// W&B keys that would change what runs and that sweep does not do.
struct Unsupported {
  const char* key;
  const char* why;
};
constexpr Unsupported kUnsupportedKeys[] = {
    {"metrics", "multi-objective sweeps (W&B's method: custom) are not supported: give one metric"},
    {"scheduler", "W&B's custom schedulers (optuna, ax engines) are not supported"},
    {"job", "W&B Launch jobs are not supported: give program (and command)"},
    {"image_uri", "W&B Launch images are not supported: give program (and command)"},
};

// Macros W&B expands in `command`, and their template words (see wandb_layout.h).
constexpr const char* kMacros[] = {"env",  "interpreter",     "program",
                                   "args", "args_no_hyphens", "args_json"};

// One argv word as the command template's splitter reads it back unchanged: quoted when it holds
// whitespace or quotes, braces doubled (a literal brace is {{ or }} in a template).
std::string template_word(std::string_view word) {
  std::string escaped;
  for (char c : word) {
    if (c == '{' || c == '}') escaped += c;
    escaped += c;
  }
  if (!escaped.empty() && escaped.find_first_of(" \t\n'\"\\") == std::string::npos) return escaped;
  std::string quoted = "'";
  for (char c : escaped) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool has_key(const YAML::Node& map, const char* key) { return map[key].IsDefined(); }

// Parameter names as ${args} passes them: nested W&B parameter dicts give dotted names.
void parameter_names(const YAML::Node& parameters, const std::string& prefix,
                     std::vector<std::string>& out) {
  // An absent key reads as an invalid node here, whose IsMap() throws: test IsDefined first.
  if (!parameters.IsDefined() || !parameters.IsMap()) return;
  for (const auto& entry : parameters) {
    const std::string name = prefix + entry.first.Scalar();
    const YAML::Node nested = entry.second.IsMap() ? entry.second["parameters"] : YAML::Node();
    if (nested.IsDefined() && nested.IsMap())
      parameter_names(nested, name + ".", out);
    else
      out.push_back(name);
  }
}

// The command template from W&B's program + command (a list of words and macros).
std::string command_template(ConfigTree& tree, const YAML::Node& root, Diagnostics& diagnostics) {
  const YAML::Node program = root["program"];
  const YAML::Node command = root["command"];
  std::string program_text;
  if (program.IsDefined()) {
    if (!program.IsScalar() || program.Scalar().empty())
      diagnostics.error(tree.at_mark(program.Mark()), "program",
                        "expected the training script's path, such as train.py");
    else
      program_text = program.Scalar();
  }
  std::vector<std::string> names;
  parameter_names(root["parameters"], "", names);

  std::vector<std::pair<std::string, Location>> words;  // (word or ${macro}, its place)
  if (command.IsDefined()) {
    if (!command.IsSequence() || command.size() == 0) {
      diagnostics.error(tree.at_mark(command.Mark()), "command",
                        "expected a list of words, such as [${env}, ${interpreter}, ${program}, "
                        "${args}]");
      return "";
    }
    for (std::size_t i = 0; i < command.size(); ++i) {
      const Location at = tree.at_mark(command[i].Mark());
      if (!command[i].IsScalar())
        diagnostics.error(at, "command." + std::to_string(i), "expected a word or a ${macro}");
      else
        words.emplace_back(command[i].Scalar(), at);
    }
  } else {
    const Location at = tree.at_mark(program.IsDefined() ? program.Mark() : root.Mark());
    for (const char* word : {"${env}", "${interpreter}", "${program}", "${args}"})
      words.emplace_back(word, at);
  }

  std::string out;
  auto add = [&out](const std::string& word) {
    if (!out.empty()) out += ' ';
    out += word;
  };
  for (const auto& [word, at] : words) {
    if (word.size() < 3 || word.rfind("${", 0) != 0 || word.back() != '}') {
      add(template_word(word));
      continue;
    }
    const std::string macro = word.substr(2, word.size() - 3);
    if (macro == "env") {
      add("/usr/bin/env");
    } else if (macro == "interpreter") {
      add("python3");
    } else if (macro == "program") {
      if (program_text.empty())
        diagnostics.error(at, "command", "${program} needs the program key (the training script)");
      else
        add(template_word(program_text));
    } else if (macro == "args" || macro == "args_no_hyphens") {
      const std::string dashes = macro == "args" ? "--" : "";
      for (const std::string& name : names) add(dashes + name + "={" + name + "}");
    } else if (macro == "args_json") {
      add("{args_json}");
    } else if (macro == "args_json_file") {
      diagnostics.error(at, "command",
                        "${args_json_file} is not supported: use ${args_json} (the same JSON as "
                        "one argument)");
    } else {
      diagnostics.error(at, "command",
                        "unknown macro ${" + macro + "}" +
                            suggestion_suffix(macro, {std::begin(kMacros), std::end(kMacros)}));
    }
  }
  return out;
}

}  // namespace

bool adopt_wandb_layout(ConfigTree& tree, Diagnostics& diagnostics) {
  YAML::Node& root = tree.root;
  if (!root.IsMap()) return false;
  bool wandb = has_key(root, "program") || has_key(root, "command");
  for (const char* key : kSweepKeys) wandb = wandb || has_key(root, key);
  if (!wandb) return false;

  // Mixed with a sweep: section: each top-level sweep key is reported once (and dropped, so it is
  // not reported again as unknown); program/command still become the trainer.
  const bool mixed = has_key(root, "sweep");
  if (mixed)
    for (const char* key : kSweepKeys)
      if (has_key(root, key)) {
        diagnostics.error(tree.at_mark(root[key].Mark()), key,
                          "W&B's top-level sweep keys and a sweep: section cannot be mixed: "
                          "move it under sweep:, or the sweep: section's keys to the top level");
        root.remove(key);
      }
  if (has_key(root, "trainer") && (has_key(root, "program") || has_key(root, "command"))) {
    diagnostics.error(tree.at_mark(root["trainer"].Mark()), "trainer",
                      "give either W&B's program/command or trainer: {command: ...}, not both");
    return false;
  }
  for (const Unsupported& u : kUnsupportedKeys)
    if (has_key(root, u.key)) diagnostics.error(tree.at_mark(root[u.key].Mark()), u.key, u.why);
  for (const char* key : kServiceKeys)
    if (has_key(root, key)) {
      diagnostics.warn(tree.at_mark(root[key].Mark()), key,
                       "used by W&B's service only; ignored here");
      root.remove(key);
    }

  if (!mixed) {
    YAML::Node sweep(YAML::NodeType::Map);
    for (const char* key : kSweepKeys)
      if (has_key(root, key)) {
        sweep[key] = root[key];
        root.remove(key);
      }
    root["sweep"] = sweep;
  }
  const YAML::Node sweep = root["sweep"];

  if (has_key(root, "program") || has_key(root, "command")) {
    const YAML::Node place = has_key(root, "command") ? root["command"] : root["program"];
    const Location where = tree.at_mark(place.Mark());
    const YAML::Node parameters = sweep.IsMap() ? sweep["parameters"] : YAML::Node();
    YAML::Node view(YAML::NodeType::Map);  // command_template reads program, command, parameters
    for (const char* key : {"program", "command"})
      if (has_key(root, key)) view[key] = root[key];
    if (parameters.IsDefined()) view["parameters"] = parameters;
    const std::string command = command_template(tree, view, diagnostics);
    root.remove("program");
    root.remove("command");
    YAML::Node trainer(YAML::NodeType::Map);
    trainer["command"] = command;
    root["trainer"] = trainer;
    tree.origins["trainer.command"] = where;
  }
  return true;
}

}  // namespace sweep::config
