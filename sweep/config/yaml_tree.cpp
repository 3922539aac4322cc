/*
 * yaml_tree.cpp — YAML parsing, dotted-path edits and YAML ↔ JSON for configs.
 *
 * yaml-cpp nodes are references: `a = b` on an existing node rewrites what it points at, so every
 * walk down the tree rebinds with reset(), never with assignment. Values set into a trial's tree
 * are cloned first (Clone keeps marks), so no two trees ever share a node.
 */
#include "sweep/config/yaml_tree.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "common/format.h"
#include "common/json.h"
#include "sweep/config/yaml_guard.h"
#include "trainer/config_keys.h"

namespace sweep::config {

namespace {

bool is_index(const std::string& part) {
  if (part.empty() || part.size() > 9) return false;
  for (char c : part)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string join_path(const std::vector<std::string>& parts, std::size_t count) {
  std::string path;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) path += '.';
    path += parts[i];
  }
  return path;
}

bool parse_whole_int(const std::string& text, std::int64_t& out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, out);
  return ec == std::errc() && ptr == end && begin != end;
}

bool parse_whole_double(const std::string& text, double& out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, out, std::chars_format::general);
  return ec == std::errc() && ptr == end && begin != end;
}

}  // namespace

Location ConfigTree::at_mark(const YAML::Mark& mark) const {
  Location loc;
  loc.file = file;
  if (mark.line >= 0) {
    loc.line = mark.line + 1;
    loc.column = mark.column + 1;
  }
  return loc;
}

Location ConfigTree::where(const std::string& path, const YAML::Node& node) const {
  std::string prefix = path;
  while (!prefix.empty()) {
    if (auto it = origins.find(prefix); it != origins.end()) return it->second;
    const auto dot = prefix.rfind('.');
    if (dot == std::string::npos) break;
    prefix.resize(dot);
  }
  if (node.IsDefined()) return at_mark(node.Mark());
  Location loc;
  loc.file = file;
  return loc;
}

Location ConfigTree::key_origin(const std::string& path, const YAML::Mark& mark) const {
  if (auto it = origins.find(path); it != origins.end()) return it->second;
  const std::string inside = path + ".";
  if (auto it = origins.lower_bound(inside);
      it != origins.end() && it->first.compare(0, inside.size(), inside) == 0)
    return it->second;
  return at_mark(mark);
}

ConfigTree ConfigTree::clone() const {
  ConfigTree copy;
  copy.file = file;
  copy.text = text;
  copy.sets = sets;
  copy.origins = origins;
  copy.root = YAML::Load(text);  // parsed once already: cannot fail now
  if (!copy.root.IsDefined() || copy.root.IsNull()) copy.root = YAML::Node(YAML::NodeType::Map);
  for (const auto& [path, value] : sets) set_path(copy.root, path, value);
  return copy;
}

ConfigTree ConfigTree::quick_clone() const {
  ConfigTree copy;
  copy.file = file;
  copy.text = text;
  copy.sets = sets;
  copy.origins = origins;
  copy.root = YAML::Clone(root);
  return copy;
}

YAML::Node parse_yaml(const std::string& file, const std::string& text, Diagnostics& diagnostics) {
  if (!check_yaml_text(file, text, diagnostics)) return YAML::Node();
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    Location loc;
    loc.file = file;
    if (e.mark.line >= 0) {
      loc.line = e.mark.line + 1;
      loc.column = e.mark.column + 1;
    }
    diagnostics.error(loc, "", yaml_syntax_error(text, e.mark.line, e.msg));
    return YAML::Node();
  }
}

const std::map<std::pair<std::string, std::string>, std::string>& key_aliases() {
  // The key table's other names (trainer/config_keys.h): Caffe solver and MATLAB
  // trainingOptions names, lower-cased as YAML keys.
  static const std::map<std::pair<std::string, std::string>, std::string> aliases = [] {
    std::map<std::pair<std::string, std::string>, std::string> out;
    for (const trainer::ConfigKey& key : trainer::config_keys())
      for (std::string_view alias : key.aliases)
        out[{std::string(key.section), std::string(alias)}] = std::string(key.name);
    return out;
  }();
  return aliases;
}

std::vector<std::string> split_dotted(const std::string& dotted) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : dotted) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  return parts;
}

namespace {

// The keys of a parameter's spec (distributions_reader.cpp reads them).
bool is_parameter_spec_key(const std::string& key) {
  for (const char* k : {"values", "value", "min", "max", "distribution", "mu", "sigma", "q",
                        "probabilities", "parameters"})
    if (key == k) return true;
  return false;
}

// Parameters are named by dotted keys (sweep.parameters.training.learning_rate.values): the parts
// from `i` on that name one are joined into one part. The name is the longest one the map has;
// else (a parameter the override adds) every part before a spec key (values, min, ...), or all.
void join_parameter_name(std::vector<std::string>& parts, std::size_t i, const YAML::Node& map) {
  if (!map.IsMap() || i >= parts.size()) return;
  std::size_t end = 0;  // parts [i, end) name the parameter
  for (std::size_t k = parts.size(); k > i + 1 && end == 0; --k) {
    std::string name = parts[i];
    for (std::size_t j = i + 1; j < k; ++j) name += "." + parts[j];
    if (map[name]) end = k;
  }
  if (end == 0) {
    end = parts.size();
    if (end > i + 1 && is_parameter_spec_key(parts.back())) --end;
  }
  for (std::size_t j = i + 1; j < end; ++j) parts[i] += "." + parts[j];
  parts.erase(parts.begin() + std::ptrdiff_t(i + 1), parts.begin() + std::ptrdiff_t(end));
}

}  // namespace

std::string set_path(YAML::Node root, const std::string& dotted, const YAML::Node& value) {
  std::vector<std::string> parts = split_dotted(dotted);
  for (const std::string& part : parts)
    if (part.empty()) return "'" + dotted + "' is not a dotted key (empty part)";
  if (!root.IsMap() && !root.IsNull()) return "the config is not a map";
  YAML::Node current;
  current.reset(root);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string parent_path = join_path(parts, i);
    // sweep.parameters (or a W&B file's top-level parameters): the next parts name a parameter.
    if (parent_path == "sweep.parameters" || parent_path == "parameters")
      join_parameter_name(parts, i, current);
    if (auto it = key_aliases().find({parent_path, parts[i]}); it != key_aliases().end())
      parts[i] = it->second;
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();

    if (current.IsSequence()) {
      if (!is_index(part) || std::stoul(part) >= current.size())
        return "'" + parent_path + "' is a list of " + std::to_string(current.size()) +
               " items: '" + part + "' is not an index into it";
      const std::size_t index = std::stoul(part);
      if (last) {
        current[index] = YAML::Clone(value);
        return "";
      }
      YAML::Node next = current[index];
      current.reset(next);
      continue;
    }
    if (!current.IsMap() && !current.IsNull())
      return "'" + parent_path + "' holds a value, not a section: '" + join_path(parts, i + 1) +
             "' cannot be set";
    const YAML::Node& lookup = current;  // const: lookups must not add keys
    for (const auto& [alias_key, canonical] : key_aliases())
      if (alias_key.first == parent_path && canonical == part && lookup[alias_key.second])
        current.remove(alias_key.second);
    if (last) {
      current[part] = YAML::Clone(value);
      return "";
    }
    // A missing key's lookup yields an invalid node that cannot be rebound: test, then create.
    if (!lookup[part] || lookup[part].IsNull()) current[part] = YAML::Node(YAML::NodeType::Map);
    YAML::Node child = current[part];
    current.reset(child);
  }
  return "";
}

std::string canonical_path(const std::string& dotted) {
  std::vector<std::string> parts = split_dotted(dotted);
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (auto it = key_aliases().find({join_path(parts, i), parts[i]}); it != key_aliases().end())
      parts[i] = it->second;
  return join_path(parts, parts.size());
}

YAML::Node find_path(const YAML::Node& root, const std::string& dotted) {
  YAML::Node current;
  current.reset(root);
  for (const std::string& part : split_dotted(dotted)) {
    const YAML::Node& lookup = current;
    if (current.IsSequence() && is_index(part) && std::stoul(part) < current.size()) {
      YAML::Node next = lookup[std::stoul(part)];
      current.reset(next);
    } else if (current.IsMap() && lookup[part]) {
      YAML::Node next = lookup[part];
      current.reset(next);
    } else {
      return YAML::Node(YAML::NodeType::Undefined);
    }
  }
  return current;
}

sweep::Json to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Sequence: {
      sweep::Json list = sweep::Json::array();
      for (const auto& item : node) list.push_back(to_json(item));
      return list;
    }
    case YAML::NodeType::Map: {
      sweep::Json map = sweep::Json::object();
      for (const auto& entry : node) map[entry.first.Scalar()] = to_json(entry.second);
      return map;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: text even when it looks like a number
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  std::int64_t whole = 0;
  if (parse_whole_int(text, whole)) return whole;
  // `nan`, `inf`, `-Infinity` (from_chars reads them) stay the text they are: JSON has no such
  // number, and one would be stored, exported and handed to the program as null, so that trials
  // of nan and inf looked alike. As text they read the same everywhere: argv, SWEEP_PARAMS, the
  // store, the exports. (YAML's .nan and .inf are text here for the same reason.)
  double real = 0;
  if (parse_whole_double(text, real) && std::isfinite(real)) return real;
  return text;
}

YAML::Node from_json(const sweep::Json& value) {
  if (value.is_null()) return YAML::Node(YAML::NodeType::Null);
  if (value.is_boolean()) return YAML::Node(value.get<bool>() ? "true" : "false");
  if (value.is_number_integer()) return YAML::Node(std::to_string(value.get<std::int64_t>()));
  if (value.is_number_unsigned()) return YAML::Node(std::to_string(value.get<std::uint64_t>()));
  if (value.is_number_float()) return YAML::Node(format_number(value.get<double>()));
  if (value.is_string()) return YAML::Node(value.get<std::string>());
  YAML::Node node(value.is_array() ? YAML::NodeType::Sequence : YAML::NodeType::Map);
  if (value.is_array()) {
    for (const auto& item : value) node.push_back(from_json(item));
  } else {
    for (const auto& [key, item] : value.items()) node[key] = from_json(item);
  }
  return node;
}

std::string format_number(double value) {
  // YAML's own spelling of the non-finite values; every other number as common/format.h writes it.
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  return shortest(value);
}

std::string emit_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return std::string(out.c_str()) + "\n";
}

}  // namespace sweep::config
