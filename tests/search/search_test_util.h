/*
 * search_test_util.h — helpers shared by the sampler tests: configs from text, a sampler driven
 * by an objective, and the points it suggested.
 */
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/search/sampler.h"
#include "sweep/search/tpe_sampler.h"

namespace sweep::search::testing {

// A config with an external trainer (no data files needed) and the given `sweep:` body lines,
// each indented by two spaces ("method: random", "max_trials: 8", "parameters:", "  x: {...}").
inline config::SweepConfig load_sweep(const std::string& sweep_body,
                                      const std::string& metric = "{name: score, goal: minimize}") {
  return config::load_config_text(
      "trainer: {command: \"true\"}\nsweep:\n  metric: " + metric + "\n" + sweep_body, "t.yaml");
}

// The search space of a random sweep over `parameters` (YAML lines "    x: {...}").
inline config::SearchSpace space_of(const std::string& parameters) {
  return load_sweep("  method: random\n  max_trials: 1\n  parameters:\n" + parameters).sweep.space;
}

// The problem lines of a config that must not load (empty when it loaded).
inline std::vector<std::string> problems(const std::string& yaml) {
  try {
    config::load_config_text(yaml, "t.yaml");
  } catch (const config::ConfigError& e) {
    return e.messages();
  }
  return {};
}

using Objective = std::function<double(const sweep::Json& params)>;

// Asks and tells `trials` times, one at a time; returns every point asked.
inline std::vector<config::TrialPoint> drive(Sampler& sampler, const Objective& objective,
                                             int trials) {
  std::vector<config::TrialPoint> points;
  for (int i = 0; i < trials; ++i) {
    const std::optional<config::TrialPoint> point = sampler.ask();
    if (!point) break;
    sampler.tell(static_cast<std::uint64_t>(point->number),
                 {TrialOutcome::complete, objective(point->params), 1});
    points.push_back(*point);
  }
  return points;
}

}  // namespace sweep::search::testing
