/*
 * run_command.cpp — `sweep run FILE`: validate, expand, then run every trial (or, with --dry-run,
 * print one line per trial and stop: nothing is trained or written).
 */
#include <algorithm>
#include <iostream>
#include <memory>

#include "common/format.h"
#include "sweep/cli/cluster_job.h"
#include "sweep/cli/commands.h"
#include "sweep/config/config.h"
#include "sweep/config/expand.h"
#include "sweep/run/devices.h"
#include "sweep/run/fused_arrays.h"
#include "sweep/run/run_sweep.h"
#include "sweep/search/tpe_sampler.h"
#include "trainer/data/data_shape.h"
#include "trainer/data/folder_reader.h"

namespace sweep::cli {

namespace {

struct RunOptions {
  std::string file;
  std::vector<std::string> overrides;
  bool dry_run = false;
  std::string db_path;
  std::string out_dir;
  std::string name;
};

// The fused arrays the run would make on this machine's devices (resources.fuse), one line each.
// Grouping resolves each trial's config, which costs time per trial: the dry run groups the
// first kGrouped trials only, so that it stays quick for any sweep size.
void print_arrays(const config::SweepConfig& config, std::uint64_t known) {
  constexpr std::uint64_t kGrouped = 4096;
  run::DevicePlan devices;
  try {
    devices = run::plan_local_devices(config.resources);
  } catch (const std::exception&) {
    return;  // `run` says what is wrong with the devices
  }
  const run::FuseContext context = run::fusion_context(devices, false);
  std::vector<config::TrialPoint> points;
  for (std::uint64_t i = 0; i < std::min(known, kGrouped); ++i)
    points.push_back(config::trial_point(config, i));
  const auto arrays = run::fuse_trials(config, points, context);
  std::cout << run::describe_fusion(config, arrays, context)
            << (known > kGrouped ? " (of the first " + std::to_string(kGrouped) + " trials)" : "")
            << "\n";
  std::size_t shown = 0;
  for (const auto& array : arrays) {
    if (array.size() < 2) continue;
    if (++shown > 20) {
      std::cout << "  ...\n";
      break;
    }
    std::cout << "  array of " << array.size() << ": trials " << run::trial_numbers(points, array)
              << "\n";
  }
}

// One line per trial, at once whatever the sweep's size: the first kShown trials are listed (an
// external command's line with its placeholders filled), the rest counted.
// A folder data set's classes in label order (its class folders sorted) and its input shape, so
// that what label k means is seen before anything trains. Nothing when the folder cannot be
// listed (the config check said why) or the data set is not a folder.
void print_folder_classes(const trainer::DataSpec& data) {
  if (data.dataset != trainer::DatasetKind::folder) return;
  try {
    const std::vector<std::string> classes = trainer::list_class_folders(data.path, "data.path");
    std::cout << "data: folder " << printable(data.path) << ", " << classes.size() << " classes:";
    for (std::size_t i = 0; i < classes.size(); ++i)
      std::cout << (i ? ", " : " ") << i << " " << printable(classes[i]);
    const trainer::Shape image = trainer::data_shape(data).image;
    if (image.c > 0)
      std::cout << "; images " << image.c << "x" << image.h << "x" << image.w << " (CxHxW)";
    std::cout << "\n";
  } catch (const Error&) {
  }
}

void print_plan(const config::SweepConfig& config) {
  constexpr std::uint64_t kShown = 50;
  const auto& metric = config.sweep.metric;
  const std::uint64_t total = config.trial_count();
  std::cout << "sweep " << config.name << ": " << total << (total == 1 ? " trial" : " trials")
            << " (" << config.shape() << "), metric " << metric.name << " (" << metric.goal << ")";
  if (metric.target) std::cout << ", target " << *metric.target;
  std::cout << "\n";
  print_folder_classes(config.base.data);
  // tpe's first trials are random search's draws (known now); the rest follow from results.
  const bool learns = config.sweep.method == "tpe";
  const std::uint64_t known =
      learns ? std::min<std::uint64_t>(
                   total, static_cast<std::uint64_t>(search::TpeOptions{}.n_startup_trials) *
                              static_cast<std::uint64_t>(config.sweep.repeats))
             : total;
  for (std::uint64_t i = 0; i < std::min(known, kShown); ++i) {
    const config::TrialPoint trial = config::trial_point(config, i);
    std::cout << "  trial " << trial.number << ": " << printable(params_text(trial.params));
    if (config.sweep.repeats > 1)
      std::cout << " (repeat " << trial.repeat << ", seed " << trial.seed << ")";
    if (config.trainer)
      std::cout << "\n      $ " << printable(config::fill_command(config, trial).command);
    std::cout << "\n";
  }
  if (known > kShown) std::cout << "  ... and " << known - kShown << " more\n";
  print_arrays(config, known);
  if (known < total)
    std::cout << "  ... and " << total - known << " more, each suggested by " << config.sweep.method
              << " from the results of the trials before it\n";
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run", "Run a sweep: train every trial of a config");
  command->add_option("FILE", options->file, "The sweep's YAML config")->required();
  add_set_option(*command, options->overrides);
  command->add_flag("--dry-run", options->dry_run,
                    "Validate and print one line per trial, then stop (nothing is trained or "
                    "written)");
  command->add_option("--db", options->db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
  command->add_option("--out", options->out_dir, "Directory for runs (default: output.dir, runs)")
      ->type_name("DIR");
  command->add_option("--name", options->name, "Name of the sweep (default: the config's name)")
      ->type_name("NAME");
  command->footer(
      "Writes OUT/NAME/sweep.db, OUT/NAME/trials/NNN/{log.txt,checkpoint.bin} and\n"
      "OUT/NAME/report.html. Ctrl-C once: running trials save a checkpoint and the sweep stops\n"
      "(continue it with 'sweep resume NAME'); Ctrl-C twice: quit at once.\n"
      "Exit status: 0 when every trial ran (a diverged or early-stopped trial is a result),\n"
      "1 when a trial failed or the sweep could not run, 2 for a bad config, 130 when\n"
      "interrupted by Ctrl-C (143 by SIGTERM, 129 by SIGHUP: each stops as Ctrl-C does).\n"
      "Examples:\n"
      "  sweep run configs/quickstart.yaml\n"
      "  sweep run configs/quickstart.yaml --dry-run\n"
      "  sweep run configs/fashion-mnist-lenet.yaml --set training.epochs=2 --name lenet-short");
  command->callback([options, command, &exit_code] {
    std::vector<std::string> overrides = options->overrides;
    // Given, even empty: `--name ''` is a bad name the config reader reports, not "unset".
    if (command->count("--name"))
      overrides.push_back(config::flag_override("--name", options->name));
    if (command->count("--out"))
      overrides.push_back(config::flag_override("--out", options->out_dir));
    config::SweepConfig config;
    try {
      config = config::load_config(options->file, overrides);
    } catch (const config::ConfigError& e) {
      exit_code = report_config_error(options->file, e.messages());
      return;
    }
    print_config_warnings(config.warnings);
    if (options->dry_run) {
      print_plan(config);
      std::cout << "dry run: nothing was trained or written\n";
      exit_code = kExitOk;
      return;
    }
    run::RunOptions run_options;
    run_options.db_path = options->db_path;
    run_options.cluster = coordinator();
    exit_code = run::run_sweep(config, run_options).exit_code();
  });
}

}  // namespace sweep::cli
