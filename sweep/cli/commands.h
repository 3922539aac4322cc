/*
 * commands.h — each `sweep` subcommand registers itself on the CLI11 app.
 *
 * A subcommand's callback stores its exit status in `exit_code` instead of calling exit(), so
 * destructors run and the tests can drive the same code. Exit status: 0 ok, 1 a run failed or a
 * runtime error, 2 a bad config or bad command line (nothing was run or written).
 */
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace sweep::cli {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

void add_validate_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
// `sweep version`, and the `--version` flag on `app`: both print version_text().
void add_version_command(CLI::App& app, int& exit_code);
// "sweep 0.x.y" and how this binary was built (MPI), without a final newline.
std::string version_text();
void add_resume_command(CLI::App& app, int& exit_code);
// list, show, best, export: read-only queries over the store.
void add_inspect_commands(CLI::App& app, int& exit_code);
// report NAME|JOB: the HTML report from the database (sweep/cli/report_command.cpp).
void add_report_command(CLI::App& app, int& exit_code);
// serve [NAME|JOB]: the reports over HTTP on localhost, live (sweep/cli/serve_command.cpp).
void add_serve_command(CLI::App& app, int& exit_code);
// The background queue (queue_arguments.h): submit FILE, worker, status [JOB], wait JOB,
// cancel JOB, logs JOB, fetch JOB (sweep/cli/submit_command.cpp, worker_command.cpp, ...).
void add_submit_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
void add_status_command(CLI::App& app, int& exit_code);
void add_wait_command(CLI::App& app, int& exit_code);
void add_cancel_command(CLI::App& app, int& exit_code);
void add_logs_command(CLI::App& app, int& exit_code);
void add_fetch_command(CLI::App& app, int& exit_code);
// export-model NAME: a trial's network as ONNX or npz (sweep/cli/export_model_command.cpp).
void add_export_model_command(CLI::App& app, int& exit_code);
// predict NAME --input PATH: a trial's network on new inputs (sweep/cli/predict_command.cpp).
void add_predict_command(CLI::App& app, int& exit_code);

// `--set KEY=VALUE`, repeatable, on a subcommand.
void add_set_option(CLI::App& command, std::vector<std::string>& overrides);

// Prints a loaded config's warnings (config::SweepConfig::warnings) on stderr, one per line.
void print_config_warnings(const std::vector<std::string>& warnings);
// Prints a ConfigError's lines to stderr with a one-line summary; returns kExitUsage.
int report_config_error(const std::string& file, const std::vector<std::string>& messages);

}  // namespace sweep::cli
