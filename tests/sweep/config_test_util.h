/*
 * config_test_util.h — helpers shared by the sweep config tests: load a config from text, and
 * capture the problem lines of a config that must fail.
 */
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/config/map_reader.h"
#include "sweep/config/train_config_reader.h"
#include "sweep/config/yaml_tree.h"

namespace sweep::config::testing {

inline SweepConfig load_text(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return load_config_text(yaml, "t.yaml", sets);
}

// The problem lines of a config that must not load (empty when it loaded).
inline std::vector<std::string> problems(const std::string& yaml,
                                         const std::vector<std::string>& sets = {}) {
  try {
    load_text(yaml, sets);
  } catch (const ConfigError& e) {
    return e.messages();
  }
  return {};
}

// The data / model / training sections of `yaml` read into `out` as a sweep reads them, without
// looking for data files or fitting the model to them; returns the problem lines. `asked`, when
// given, receives every key the readers asked for (present or not), as dotted paths.
inline std::vector<std::string> read_sections(const std::string& yaml, trainer::TrainConfig& out,
                                              std::vector<std::string>* asked = nullptr) {
  ConfigTree tree;
  tree.file = "t.yaml";
  tree.text = yaml;
  tree.root = YAML::Load(yaml);
  tree.asked_keys = asked;
  Diagnostics diagnostics;
  MapReader top(tree, diagnostics, tree.root, "");
  read_train_config(top, out, TrainReadOptions{false, false});
  return diagnostics.messages();
}

// A base that loads without data files: small synthetic data, an MLP, one epoch.
inline const char* kSyntheticBase =
    "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
    "model: {preset: mlp, hidden: [16]}\n"
    "training: {epochs: 1, batch_size: 16}\n";

}  // namespace sweep::config::testing
