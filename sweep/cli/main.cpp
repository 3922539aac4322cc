/*
 * main.cpp — the `sweep` command line: parse with CLI11, call the library, map errors to exit
 * status. Every subcommand lives in its own file; this file only assembles them.
 */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>

#include "common/check.h"
#include "common/format.h"
#include "sweep/cli/cluster_job.h"
#include "sweep/cli/commands.h"
#include "sweep/config/config_error.h"

namespace {
int run_command_line(int argc, char** argv);
}

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) would kill us by SIGXFSZ in the middle of a write, with no
  // message and a half-done step. Ignored, the write fails with EFBIG instead, which every writer
  // reports like a full disk (the store's transaction rolls back). Trial programs get the default
  // back (scheduler/child_process.cpp).
  std::signal(SIGXFSZ, SIG_IGN);
  // Under mpirun / srun: ranks > 0 serve trials here and return; rank 0 goes on with a coordinator.
  sweep::cli::ClusterJob cluster_job;
  if (const std::optional<int> served = cluster_job.start(argc, argv)) return *served;
  return cluster_job.finish(run_command_line(argc, argv));
}

namespace {

// What a command printed reached its standard output, or the exit status says it did not: `sweep
// export q > results.csv` on a full disk must not end with 0 and half a table. (A closed pipe,
// as `| head` closes it, ends the process by SIGPIPE before this.)
int checked_output(int exit_code) {
  std::cout.flush();
  const bool written = std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good();
  if (written) return exit_code;
  // errno is not told: a later call may have replaced the failed write's.
  std::cerr << "sweep: could not write all of the output to standard output (a full disk, or an "
               "output closed?)\n";
  return exit_code == sweep::cli::kExitOk ? sweep::cli::kExitFailure : exit_code;
}

int run_command_line(int argc, char** argv) {
  CLI::App app{
      "sweep: hyperparameter sweeps over a built-in deep-learning trainer.\n"
      "One YAML file describes the data, the model, the training options and the sweep; every\n"
      "trial's metrics go to SQLite (runs/NAME/sweep.db) and hopeless trials are stopped early.",
      "sweep"};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  sweep validate configs/quickstart.yaml\n"
      "  sweep run configs/quickstart.yaml --dry-run\n"
      "  sweep run configs/fashion-mnist-lenet.yaml --set training.epochs=2\n"
      "  sweep validate configs/cifar-convnet.yaml --set data.dataset=synthetic\n"
      "  sweep resume quickstart          # after Ctrl-C\n"
      "  sweep list\n"
      "  sweep show quickstart\n"
      "  sweep best quickstart\n"
      "  sweep export quickstart --format csv -o quickstart.csv\n"
      "  sweep serve quickstart           # live report on http://127.0.0.1:8787/\n"
      "Run 'sweep SUBCOMMAND --help' for a subcommand's options.");

  int exit_code = sweep::cli::kExitOk;
  sweep::cli::add_validate_command(app, exit_code);
  sweep::cli::add_run_command(app, exit_code);
  sweep::cli::add_resume_command(app, exit_code);
  sweep::cli::add_inspect_commands(app, exit_code);
  sweep::cli::add_report_command(app, exit_code);
  sweep::cli::add_serve_command(app, exit_code);
  sweep::cli::add_version_command(app, exit_code);
  sweep::cli::add_submit_command(app, exit_code);
  sweep::cli::add_worker_command(app, exit_code);
  sweep::cli::add_status_command(app, exit_code);
  sweep::cli::add_wait_command(app, exit_code);
  sweep::cli::add_cancel_command(app, exit_code);
  sweep::cli::add_logs_command(app, exit_code);
  sweep::cli::add_fetch_command(app, exit_code);
  sweep::cli::add_export_model_command(app, exit_code);
  sweep::cli::add_predict_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return sweep::cli::kExitUsage;
  } catch (const sweep::config::ConfigError& e) {
    return sweep::cli::report_config_error("", e.messages());
  } catch (const sweep::CallError& e) {
    std::cerr << "sweep: " << sweep::printable(e.what()) << "\n";
    // Our source location helps us, not the user: only on request.
    if (const char* debug = std::getenv("SWEEP_DEBUG"); debug && *debug && *debug != '0')
      std::cerr << "sweep: debug: " << sweep::printable(e.debug_text()) << "\n";
    return sweep::cli::kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "sweep: " << sweep::printable(e.what()) << "\n";
    return sweep::cli::kExitFailure;
  }
  return checked_output(exit_code);
}

}  // namespace
