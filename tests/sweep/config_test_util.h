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

// A base that loads without data files: small synthetic data, an MLP, one epoch.
inline const char* kSyntheticBase =
    "data: {dataset: synthetic, synthetic: {train_size: 64, test_size: 32}}\n"
    "model: {preset: mlp, hidden: [16]}\n"
    "training: {epochs: 1, batch_size: 16}\n";

}  // namespace sweep::config::testing
