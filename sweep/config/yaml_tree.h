/*
 * yaml_tree.h — a config's YAML tree plus where every value came from.
 *
 * Values reach the tree three ways: written in the file (yaml-cpp's Node::Mark() knows the line),
 * set with `--set key=value`, or put there by the sweep for one trial. The last two have no
 * useful mark of their own, so the tree keeps an origin table (dotted path → Location) that wins
 * over the node's mark: an invalid swept batch size is reported at its line in sweep.parameters,
 * a bad --set value is reported as the --set argument.
 */
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <vector>

#include "common/json.h"
#include "sweep/config/config_error.h"

namespace sweep::config {

struct ConfigTree {
  std::string file;  // as given by the user, used in every message
  std::string text;  // the file's YAML
  std::vector<std::pair<std::string, YAML::Node>> sets;  // --set values applied to root, in order
  YAML::Node root;
  std::map<std::string, Location> origins;  // dotted path → where an override came from
  // When set, every key a reader asks for (present or not) is appended as its dotted path: the
  // keys the config accepts, as the readers define them (for mapping W&B's flat parameter names).
  std::vector<std::string>* asked_keys = nullptr;

  // Where the value at `path` (node `node`) came from: the longest overriding prefix of `path`
  // in `origins`, else the node's own mark, else the file.
  Location where(const std::string& path, const YAML::Node& node) const;
  // Where the key at `path` came from when an override made it: the override of `path` itself or
  // of a key inside it (--set a.b.c=1 made a and a.b), else the node's own mark.
  Location key_origin(const std::string& path, const YAML::Mark& mark) const;
  Location at_mark(const YAML::Mark& mark) const;

  // A deep copy that keeps the file's marks: trials change their copy, never the base. (YAML::Clone
  // drops marks, so the copy is parsed again from `text` and the --set values are replayed.)
  ConfigTree clone() const;
  // A deep copy without marks (YAML::Clone: no parsing, several times faster than clone()).
  // Messages about it have no line numbers: use it to find out whether a trial has problems, and
  // clone() to report them.
  ConfigTree quick_clone() const;
};

// Parses YAML text. A syntax error is recorded as FILE:LINE:COL and a null node returned.
YAML::Node parse_yaml(const std::string& file, const std::string& text, Diagnostics& diagnostics);

// Sets `dotted` (a.b.c; a number indexes a list) to `value`, creating maps on the way. Keys the
// config accepts under another name (Caffe's base_lr for learning_rate) are replaced, so a set
// value never conflicts with an alias written in the file. Returns "" or why it could not.
std::string set_path(YAML::Node root, const std::string& dotted, const YAML::Node& value);

// `dotted` with every alias replaced by its canonical key (training.base_lr →
// training.learning_rate).
std::string canonical_path(const std::string& dotted);

// The node at `dotted`, or an undefined node.
YAML::Node find_path(const YAML::Node& root, const std::string& dotted);

std::vector<std::string> split_dotted(const std::string& dotted);

// Scalars become numbers or booleans when they read as one (YAML's plain-scalar rules), else text.
sweep::Json to_json(const YAML::Node& node);
YAML::Node from_json(const sweep::Json& value);

// Shortest text that reads back as the same double ("0.1", not "0.10000000000000001").
std::string format_number(double value);

// The YAML text of a tree, for the trial's resolved config.
std::string emit_yaml(const YAML::Node& node);

// Config keys the file may spell another way: (section path, alias) → canonical key.
const std::map<std::pair<std::string, std::string>, std::string>& key_aliases();

}  // namespace sweep::config
