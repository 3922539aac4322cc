/*
 * fused_arrays.h — which trials of a sweep train together as fused arrays (resources.fuse), and
 * how the dry run says so.
 *
 * Trials fuse when their resolved configs have one shape (trainer/array/fusion.h says which keys
 * may differ). Only the built-in trainer's trials of one device each fuse, and only trials known
 * before the sweep starts (grid, random; a tpe sweep makes each trial from the results before
 * it, so it runs them one by one). `fuse: auto` fuses on GPUs only; `fuse: K` (K >= 2) fuses on
 * the CPU too (where it saves nothing but shows the same numbers: the CPU tests use it). Each
 * group of one shape is cut into arrays of near-equal size, at most K (auto: 64) members, and at
 * least as many arrays as the executor has slots when the group is large enough to fill them, so
 * that eight GPUs get eight arrays, not one. Grouping resolves every trial's config once before
 * the sweep starts, so its cost grows with the number of trials.
 */
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/run/devices.h"

namespace sweep::run {

struct FuseContext {
  bool on_gpu = false;   // the executor's slots are GPUs
  int slots = 1;         // the executor's slots
  bool cluster = false;  // trials go to MPI ranks: no arrays
};

// The fusion facts of a device plan (its slots, whether they are GPUs).
FuseContext fusion_context(const DevicePlan& devices, bool cluster);

// The trials of `points` (in order) cut into arrays: indices into `points`, every index once,
// arrays in the order of their first member; an array of one is an ordinary trial.
std::vector<std::vector<std::size_t>> fuse_trials(const config::SweepConfig& config,
                                                  const std::vector<config::TrialPoint>& points,
                                                  const FuseContext& context);

// For people: "fused: 2 arrays (32 + 32 trials)", or why nothing fuses ("fuse: off").
std::string describe_fusion(const config::SweepConfig& config,
                            const std::vector<std::vector<std::size_t>>& arrays,
                            const FuseContext& context);

// An array's trial numbers, runs joined: "0-7", "0, 2, 4-6".
std::string trial_numbers(const std::vector<config::TrialPoint>& points,
                          const std::vector<std::size_t>& array);

}  // namespace sweep::run
