/*
 * store_test_util.h — a temporary directory per test and small builders for sweeps and trials.
 *
 * Each test gets its own directory (mkdtemp), removed afterwards, so tests may run in parallel
 * (ctest -j) without sharing a database file.
 */
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/metric_names.h"
#include "store/store.h"

namespace sweep::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sweep-store-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline SweepSpec sweep_spec(std::string name, MetricGoal goal = MetricGoal::maximize) {
  SweepSpec s;
  s.name = std::move(name);
  s.config_yaml = "name: " + s.name + "\nsweep: {method: grid}\n";
  s.config_path = "configs/" + s.name + ".yaml";
  s.metric_name = metric_names::kValAccuracy;
  s.metric_goal = goal;
  s.devices = "cpu x2";
  return s;
}

// `count` trials numbered 0.., with a learning rate and batch size that differ per trial.
inline std::vector<TrialSpec> trial_specs(int count) {
  std::vector<TrialSpec> specs;
  for (int i = 0; i < count; ++i) {
    TrialSpec t;
    t.number = i;
    t.params = {{"training.learning_rate", 0.001 * (i + 1)},
                {"training.batch_size", 64 << (i % 3)},
                {"training.optimizer", i % 2 ? "adam" : "sgdm"}};
    t.config_yaml = "training: {learning_rate: " + std::to_string(0.001 * (i + 1)) + "}\n";
    t.seed = 100 + i;
    specs.push_back(std::move(t));
  }
  return specs;
}

inline MetricPoint point(std::int64_t trial_id, std::string name, std::int64_t step, double value) {
  MetricPoint p;
  p.trial_id = trial_id;
  p.name = std::move(name);
  p.step = step;
  p.epoch = static_cast<double>(step);
  p.value = value;
  p.wall_time = 1.7e9 + static_cast<double>(step);
  return p;
}

}  // namespace sweep::test
