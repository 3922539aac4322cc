/*
 * config.h — load_config(): one YAML file (+ --set overrides) → a validated SweepConfig.
 *
 * Everything is checked before anything runs, and every problem is reported at once:
 * load_config throws ConfigError whose messages() are lines like
 *   sweeps/lenet.yaml:12:20: key 'training.learning_rate': must be > 0, got -0.1
 * Validation covers the base config AND every trial the sweep expands to (each trial's swept
 * values are written into a copy of the YAML tree, which is re-read and re-checked), so a swept
 * batch_size of 0 is reported at its line in sweep.parameters.
 *
 *   auto config = sweep::config::load_config("configs/quickstart.yaml", {"training.epochs=1"});
 *   for (const auto& trial : sweep::config::expand(config)) train(trial.config, ...);
 */
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json.h"
#include "sweep/config/config_error.h"
#include "sweep/config/search_space.h"
#include "trainer/train_config.h"

namespace sweep::config {

struct ConfigTree;

struct MetricSpec {
  std::string name = "val_accuracy";  // val_accuracy | val_loss | train_loss | train_accuracy, or
                                      // any name an external trainer reports
  std::string goal = "maximize";      // maximize | minimize (default: from the name)
  std::optional<double> target;       // stop the sweep once a trial reaches it
  bool maximize() const { return goal == "maximize"; }
};

// sweep.early_terminate, checked here and handed to the scheduler's make_stopping_policy as
// `policy` (the keys it takes, with W&B's and Ray's spellings mapped onto them).
struct EarlyTerminateSpec {
  std::string type;  // median | asha | hyperband
  //   median:    min_epochs (alias grace_period), min_trials
  //   asha:      min_epochs (aliases min_iter, grace_period), eta, max_epochs (alias max_iter)
  //   hyperband: min_iter (alias min_epochs), eta — or max_iter (alias max_epochs), s, eta
  sweep::Json policy = sweep::Json::object();  // {type, ...keys given}
};

struct SweepSpec {
  std::string method = "grid";    // grid | random | tpe (`bayes` in the file is read as tpe)
  std::string method_as_written;  // the file's word when it differs from `method` ("bayes")
  MetricSpec metric;
  SearchSpace space;
  std::int64_t max_trials = 0;  // random, tpe: number of points; grid: optional cap (0 = none)
  std::uint64_t seed = 0;       // random and tpe seed
  int repeats = 1;              // trials per point, training.seed + repeat
  std::optional<EarlyTerminateSpec> early_terminate;
};

// The one resources key a sweep may vary per trial (values: [1, 2] or all): how many GPUs each
// trial trains on. The others shape the executor, which is one for the whole sweep.
inline constexpr const char* kGpusPerTrialKey = "resources.gpus_per_trial";

// The most trials at once on one device (cpu_slots, trials_per_gpu, a worker's --cpu-slots) and
// threads for one trial (cpu_threads): each slot is a thread (on a GPU a stream and a trial's
// memory too), and 100,000 CPU slots started 100,000 threads for a 2-trial sweep, ran out of them
// after 12 s and 6.7 GB, and left the sweep `running`.
inline constexpr int kMaxSlotsPerDevice = 1024;

struct ResourcesSpec {
  std::string execution = "auto";  // auto | cpu | gpu | multi-gpu
  bool all_gpus = true;            // gpus: all
  std::vector<int> gpus;           // gpus: [0, 2]
  int cpu_slots = 1;               // trials at once on the CPU
  int trials_per_gpu = 1;
  int gpus_per_trial = 1;           // GPUs one trial trains on at once (data parallel)
  bool gpus_per_trial_all = false;  // gpus_per_trial: all (every selected GPU)
  int cpu_threads = 0;              // oneTBB threads per CPU trial; 0 = share all
  double trial_timeout = 0;         // seconds; 0 = none
  // fuse: auto | off | K. Trials of one shape (trainer/array/fusion.h) train as one array on a
  // GPU slot. auto: on GPUs, arrays of up to kAutoFuseMembers; off (0): never; K: at most K
  // members per array, on the CPU too.
  int fuse = kFuseAuto;
  static constexpr int kFuseAuto = -1;
  static constexpr int kAutoFuseMembers = 64;
};

struct ExternalTrainerSpec {
  std::string command;          // with {dotted.key}, {param}, {trial}, {seed}, {trial_dir}
  double metric_timeout = 600;  // seconds without a metric line before the trial fails
};

struct SweepConfig {
  std::string name;                    // runs/NAME/ (default: the file's stem)
  std::string path;                    // the config file as given
  std::string source_text;             // the file's text, stored with the sweep
  std::vector<std::string> overrides;  // --set key=value, in order
  trainer::TrainConfig base;           // the config before any swept value
  SweepSpec sweep;
  ResourcesSpec resources;
  std::optional<ExternalTrainerSpec> trainer;  // absent: the built-in trainer
  std::string output_dir = "runs";
  // Lines like "FILE:LINE:COL: warning: key '...': ..." for what runs but maybe not as meant (a
  // log_uniform whose bounds look like values); the CLI prints them before anything runs.
  std::vector<std::string> warnings;

  std::uint64_t trial_count() const;
  std::string shape() const;  // "grid 4 × 3", "random, 12 samples", "tpe, each suggested from
                              // the results before it", + ", 2 repeats each"

  std::shared_ptr<const ConfigTree> tree;  // the YAML tree after --set (for expand)
};

// Throws ConfigError with every problem found (including those of each expanded trial), or
// sweep::Error when the file cannot be read.
SweepConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// The override a flag of run and submit makes: --name sets name, --out output.dir, each to its
// value as text, whatever YAML would make of it ('runs: old' is a directory, not a map), and
// messages about it name the flag ("--name '': key 'name': the name is empty").
std::string flag_override(const std::string& flag, const std::string& value);

// The overrides `sweep resume --set` takes: the keys that say where the data lives (data.path) and
// where trials run (resources.*), never what a trial computes, since the sweep's finished trials
// were trained with the stored values. Throws ConfigError naming each other key.
void check_placement_overrides(const std::vector<std::string>& overrides);

// The text of a config file, read with the checks every entry point shares: a directory, a
// missing or unreadable file, or more than kMaxConfigBytes (/dev/zero) throw ConfigError.
std::string read_config_file(const std::string& path);

// The same from text (tests, stored configs); `path` is used in messages only.
SweepConfig load_config_text(const std::string& text, const std::string& path,
                             const std::vector<std::string>& overrides = {});

// The config as it runs, for storing with the sweep (resume reloads it): the file's text when no
// --set was given, else the YAML tree with the overrides applied (the file's comments are lost
// then) under a comment that lists them.
std::string effective_yaml(const SweepConfig& config);

// The metric names the built-in trainer reports.
const std::vector<std::string>& builtin_metric_names();

}  // namespace sweep::config
