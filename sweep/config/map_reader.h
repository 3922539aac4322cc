/*
 * map_reader.h — reads one YAML map into struct fields, checking type and range as it goes.
 *
 * Each call names a key it accepts; finish() then reports every key the file has that no call
 * named, with the nearest accepted key as a suggestion. So the list of valid keys is exactly the
 * list of fields read — there is no second table to keep in step. A field that is absent keeps
 * the struct's default; a field with a bad value records one message and keeps the default, so
 * reading goes on and every problem of the file is found in one pass.
 */
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sweep/config/config_error.h"
#include "sweep/config/yaml_tree.h"
#include "trainer/config_keys.h"
#include "trainer/vocabulary.h"

namespace sweep::config {

// An allowed numeric interval (the key table's, trainer/config_keys.h): "must be in [0, 1)".
using trainer::Range;

class MapReader {
 public:
  // `node` may be undefined or null (the section is absent: every field keeps its default).
  MapReader(const ConfigTree& tree, Diagnostics& diagnostics, YAML::Node node, std::string path);

  bool present() const { return map_.IsDefined() && !map_.IsNull(); }
  bool has(const std::string& key);
  YAML::Node node(const std::string& key);  // marks the key accepted; undefined when absent
  std::string path_of(const std::string& key) const;
  const std::string& path() const { return path_; }
  Location where(const std::string& key);
  void error(const std::string& key, const std::string& text);

  // Each returns true when the key was present and valid (out was written).
  bool number(const std::string& key, double& out, Range range = Range::any());
  bool integer(const std::string& key, int& out, Range range = Range::any());
  bool integer64(const std::string& key, std::int64_t& out, Range range = Range::any());
  bool unsigned64(const std::string& key, std::uint64_t& out);
  bool boolean(const std::string& key, bool& out);
  bool text(const std::string& key, std::string& out);
  bool choice(const std::string& key, std::string& out, const std::vector<std::string>& choices,
              const std::string& what);
  bool integer_list(const std::string& key, std::vector<int>& out, Range range);
  // A list of non-empty scalars (column names), each at most once.
  bool text_list(const std::string& key, std::vector<std::string>& out);
  // One word of a trainer vocabulary (trainer/vocabulary.h): the allowed words and the
  // suggestion for a typo come from the trainer's own table.
  template <class E>
  bool word(const std::string& key, E& out, const std::string& what) {
    std::string given;
    if (!choice(key, given, trainer::word_list<E>(), what)) return false;
    out = *trainer::parse_word<E>(given);
    return true;
  }

  // A nested map (absent: an empty reader).
  MapReader section(const std::string& key);

  // Reports keys no call asked for. Call once, after every field was read.
  void finish();

  const ConfigTree& tree() const { return tree_; }
  Diagnostics& diagnostics() { return diagnostics_; }

 private:
  const ConfigTree& tree_;
  Diagnostics& diagnostics_;
  YAML::Node map_;
  std::string path_;
  std::vector<std::string> accepted_;
  bool valid_map_ = false;
};

// Typed reads of a lone node, shared with the layer and sweep readers. On failure they return
// the message ("expected a number, got 'abc'") and leave out unchanged.
std::optional<std::string> read_number(const YAML::Node& node, double& out);
std::optional<std::string> read_integer(const YAML::Node& node, std::int64_t& out);
std::optional<std::string> read_bool(const YAML::Node& node, bool& out);
std::string describe_node(const YAML::Node& node);  // "'abc'", "a map", "a list"

}  // namespace sweep::config
