/*
 * resume_command.cpp — `sweep resume NAME`: continue an interrupted (or crashed) sweep.
 */
#include <memory>

#include "sweep/cli/cluster_job.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/sweep_argument.h"
#include "sweep/run/run_sweep.h"

namespace sweep::cli {

namespace {
struct ResumeArgs {
  std::string name;
  std::string out_dir = "runs";
  std::string db_path;
  bool retry_failed = false;
  std::vector<std::string> overrides;
};
}  // namespace

void add_resume_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ResumeArgs>();
  CLI::App* command = app.add_subcommand("resume",
                                         "Continue a sweep: unfinished trials run (from their "
                                         "checkpoints), finished ones never again");
  command->add_option("NAME", args->name, "The sweep's name, or its directory (runs/NAME)")
      ->required();
  command->add_option("--out", args->out_dir, "Directory of runs (default: runs)")
      ->type_name("DIR");
  command->add_option("--db", args->db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
  command->add_flag("--retry-failed", args->retry_failed,
                    "Also run the trials that failed again (diverged ones stay: the same seed "
                    "would diverge again)");
  command
      ->add_option("--set", args->overrides,
                   "Where the data lives or the trials run, for this resume (repeatable): "
                   "data.path and resources.* only, as YAML: --set data.path=/scratch/fmnist")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  command->footer(
      "Completed, early-stopped, diverged and cancelled trials are kept as they are; interrupted\n"
      "ones continue from trials/NNN/checkpoint.bin.\n"
      "Examples:\n"
      "  sweep resume quickstart\n"
      "  sweep resume fashion-mnist-lenet --retry-failed\n"
      "  sweep resume my-sweep --out /data/runs\n"
      "  sweep resume /scratch/runs/my-sweep --set data.path=/scratch/fashion-mnist");
  command->callback([args, &exit_code] {
    const SweepPlace place = sweep_place(args->name, args->out_dir);
    run::ResumeOptions options;
    options.out_dir = place.out_dir;
    options.run.db_path = args->db_path;
    options.retry_failed = args->retry_failed;
    options.overrides = args->overrides;
    options.run.cluster = coordinator();
    exit_code = run::resume_sweep(place.name, options).exit_code();
  });
}

}  // namespace sweep::cli
