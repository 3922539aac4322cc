/*
 * map_reader.cpp — typed, range-checked reads of YAML scalars.
 *
 * Numbers are parsed with from_chars over the whole scalar (yaml-cpp's as<double>() would accept
 * "1.5abc" through a stream); an integer field also takes an integral float ("64.0", "1e3") so that
 * values sampled by q_uniform reach integer fields. Messages quote the value as written.
 */
#include "sweep/config/map_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sweep/config/suggest.h"

namespace sweep::config {

std::string describe_node(const YAML::Node& node) {
  if (node.IsMap()) return node.size() == 0 ? "an empty map" : "a map";
  if (node.IsSequence()) return node.size() == 0 ? "an empty list" : "a list";
  if (node.IsNull() || !node.IsDefined()) return "nothing";
  return "'" + node.Scalar() + "'";
}

std::optional<std::string> read_number(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) return "expected a number, got " + describe_node(node);
  const std::string& text = node.Scalar();
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  // YAML's own spellings of NaN and infinity (.nan, -.Inf), and a number past a double's range
  // (1e400), are numbers, just not finite ones: said so, not "expected a number".
  std::string word(begin, end);
  if (!word.empty() && word.front() == '-') word.erase(0, 1);
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (word == ".nan" || word == ".inf" || (ec == std::errc::result_out_of_range && ptr == end))
    return "expected a finite number, got '" + text + "'";
  if (ec != std::errc() || ptr != end || begin == end || node.Tag() == "!")
    return "expected a number, got '" + text + "'";
  if (!std::isfinite(value)) return "expected a finite number, got '" + text + "'";
  out = value;
  return std::nullopt;
}

std::optional<std::string> read_integer(const YAML::Node& node, std::int64_t& out) {
  if (!node.IsScalar()) return "expected an integer, got " + describe_node(node);
  double value = 0;
  if (read_number(node, value)) return "expected an integer, got '" + node.Scalar() + "'";
  if (value != std::floor(value)) return "expected an integer, got '" + node.Scalar() + "'";
  if (std::fabs(value) > 9.0e15)
    return "expected an integer from -9e15 to 9e15, got '" + node.Scalar() + "'";
  out = static_cast<std::int64_t>(value);
  return std::nullopt;
}

std::optional<std::string> read_bool(const YAML::Node& node, bool& out) {
  if (!node.IsScalar() || node.Tag() == "!")
    return "expected true or false, got " + describe_node(node);
  std::string text = node.Scalar();
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "true" || text == "yes" || text == "on") {
    out = true;
  } else if (text == "false" || text == "no" || text == "off") {
    out = false;
  } else {
    return "expected true or false, got '" + node.Scalar() + "'";
  }
  return std::nullopt;
}

MapReader::MapReader(const ConfigTree& tree, Diagnostics& diagnostics, YAML::Node node,
                     std::string path)
    : tree_(tree), diagnostics_(diagnostics), path_(std::move(path)) {
  map_.reset(node);
  if (!map_.IsDefined() || map_.IsNull()) return;
  if (!map_.IsMap()) {
    diagnostics_.error(tree_.where(path_, map_), path_,
                       "expected a map of settings, got " + describe_node(map_));
    return;
  }
  valid_map_ = true;
}

std::string MapReader::path_of(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool MapReader::has(const std::string& key) { return node(key).IsDefined(); }

YAML::Node MapReader::node(const std::string& key) {
  if (tree_.asked_keys) tree_.asked_keys->push_back(path_of(key));
  if (std::find(accepted_.begin(), accepted_.end(), key) == accepted_.end())
    accepted_.push_back(key);
  if (!valid_map_) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node& lookup = map_;  // const: a missing key must not be added by the lookup
  YAML::Node found(YAML::NodeType::Undefined);
  if (lookup[key]) found.reset(lookup[key]);
  for (const auto& [alias_key, canonical] : key_aliases()) {
    if (alias_key.first != path_ || canonical != key) continue;
    accepted_.push_back(alias_key.second);
    if (!lookup[alias_key.second]) continue;
    if (found.IsDefined()) {
      diagnostics_.error(
          tree_.where(path_of(alias_key.second), lookup[alias_key.second]),
          path_of(alias_key.second),
          "'" + alias_key.second + "' is another name for '" + key + "': give only one of them");
      continue;
    }
    found.reset(lookup[alias_key.second]);
  }
  return found;
}

Location MapReader::where(const std::string& key) {
  YAML::Node value = node(key);
  return tree_.where(path_of(key), value.IsDefined() ? value : map_);
}

void MapReader::error(const std::string& key, const std::string& text) {
  diagnostics_.error(where(key), path_of(key), text);
}

bool MapReader::number(const std::string& key, double& out, Range range) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  double parsed = 0;
  if (auto problem = read_number(value, parsed)) {
    error(key, *problem);
    return false;
  }
  if (!range.contains(parsed)) {
    error(key, "must be " + range.describe() + ", got " + value.Scalar());
    return false;
  }
  out = parsed;
  return true;
}

bool MapReader::integer64(const std::string& key, std::int64_t& out, Range range) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  std::int64_t parsed = 0;
  if (auto problem = read_integer(value, parsed)) {
    error(key, *problem);
    return false;
  }
  if (!range.contains(static_cast<double>(parsed))) {
    error(key, "must be " + range.describe() + ", got " + value.Scalar());
    return false;
  }
  out = parsed;
  return true;
}

bool MapReader::integer(const std::string& key, int& out, Range range) {
  std::int64_t wide = out;
  if (!integer64(key, wide, range)) return false;
  if (wide > 2147483647 || wide < -2147483647) {
    error(key, "is too large, got " + std::to_string(wide));
    return false;
  }
  out = static_cast<int>(wide);
  return true;
}

bool MapReader::unsigned64(const std::string& key, std::uint64_t& out) {
  std::int64_t wide = 0;
  if (!integer64(key, wide, Range::at_least(0))) return false;
  out = static_cast<std::uint64_t>(wide);
  return true;
}

bool MapReader::boolean(const std::string& key, bool& out) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  if (auto problem = read_bool(value, out)) {
    error(key, *problem);
    return false;
  }
  return true;
}

bool MapReader::text(const std::string& key, std::string& out) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  if (!value.IsScalar()) {
    error(key, "expected text, got " + describe_node(value));
    return false;
  }
  // A name, a path or a command with a NUL byte (YAML's "\0" or "\u0000") ends at it for the
  // system: output.dir "ab\0cd" made the directory ab, after validate had said ok.
  if (value.Scalar().find('\0') != std::string::npos) {
    error(key, "the text holds a NUL byte (\\0), which no name, path or command can hold");
    return false;
  }
  out = value.Scalar();
  return true;
}

bool MapReader::choice(const std::string& key, std::string& out,
                       const std::vector<std::string>& choices, const std::string& what) {
  std::string given;
  if (!text(key, given)) return false;
  if (std::find(choices.begin(), choices.end(), given) == choices.end()) {
    error(key, "unknown " + what + " '" + given + "'" + suggestion_suffix(given, choices));
    return false;
  }
  out = given;
  return true;
}

bool MapReader::integer_list(const std::string& key, std::vector<int>& out, Range range) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  if (!value.IsSequence()) {
    error(key, "expected a list of integers, got " + describe_node(value));
    return false;
  }
  std::vector<int> parsed;
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    std::int64_t item = 0;
    const std::string item_path = path_of(key) + "." + std::to_string(i);
    if (auto problem = read_integer(value[i], item)) {
      diagnostics_.error(tree_.where(item_path, value[i]), item_path, *problem);
      ok = false;
    } else if (!range.contains(static_cast<double>(item))) {
      diagnostics_.error(tree_.where(item_path, value[i]), item_path,
                         "must be " + range.describe() + ", got " + value[i].Scalar());
      ok = false;
    } else {
      parsed.push_back(static_cast<int>(item));
    }
  }
  if (ok) out = std::move(parsed);
  return ok;
}

bool MapReader::text_list(const std::string& key, std::vector<std::string>& out) {
  YAML::Node value = node(key);
  if (!value.IsDefined()) return false;
  if (!value.IsSequence()) {
    error(key, "expected a list of names, got " + describe_node(value));
    return false;
  }
  std::vector<std::string> parsed;
  bool ok = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string item_path = path_of(key) + "." + std::to_string(i);
    const auto problem = [&](const std::string& text) {
      diagnostics_.error(tree_.where(item_path, value[i]), item_path, text);
      ok = false;
    };
    if (!value[i].IsScalar() || value[i].Scalar().empty())
      problem("expected a name, got " + describe_node(value[i]));
    else if (std::find(parsed.begin(), parsed.end(), value[i].Scalar()) != parsed.end())
      problem("'" + value[i].Scalar() + "' is listed twice");
    else
      parsed.push_back(value[i].Scalar());
  }
  if (ok) out = std::move(parsed);
  return ok;
}

MapReader MapReader::section(const std::string& key) {
  return MapReader(tree_, diagnostics_, node(key), path_of(key));
}

void MapReader::finish() {
  if (!valid_map_) return;
  for (const auto& entry : map_) {
    const std::string key = entry.first.Scalar();
    if (std::find(accepted_.begin(), accepted_.end(), key) != accepted_.end()) continue;
    std::vector<std::string> known;
    for (const std::string& candidate : accepted_) {
      const bool is_alias = key_aliases().count({path_, candidate}) > 0;
      if (!is_alias) known.push_back(candidate);
    }
    const std::string path = path_of(key);
    if (key == "<<") {  // yaml-cpp reads a merge key as a key like any other
      diagnostics_.error(tree_.key_origin(path, entry.first.Mark()), path,
                         "YAML merge keys (<<) are not supported: write the keys out (an anchor "
                         "and alias of the whole map, key: *name, work)");
      continue;
    }
    const std::string near = nearest(key, known);
    std::string text = "unknown key";
    if (!near.empty()) {
      text += ", did you mean '" + near + "'?";
    } else if (!known.empty()) {
      text += " (" + (path_.empty() ? std::string("top-level keys") : "keys of " + path_) + ": " +
              join(known) + ")";
    }
    diagnostics_.error(tree_.key_origin(path, entry.first.Mark()), path, text);
  }
}

}  // namespace sweep::config
