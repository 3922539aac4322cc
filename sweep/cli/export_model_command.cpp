/*
 * export_model_command.cpp — `sweep export-model NAME [--trial N | --best] -o FILE
 * [--format onnx|npz]`: a trial's trained network (its model file) as ONNX or as named arrays.
 *
 * The format is --format, else the output's extension (.npz is npz, anything else ONNX). The best
 * trial is the default, by the store's rule (trial_model.h). The file is written whole or not at
 * all, never over a database (output_file.h).
 */
#include <iostream>
#include <memory>
#include <optional>

#include "common/check.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/output_file.h"
#include "sweep/cli/trial_model.h"
#include "trainer/export/npz_writer.h"
#include "trainer/export/onnx_export.h"
#include "trainer/model_file.h"

namespace sweep::cli {

namespace {

struct ExportModelArgs {
  std::string name, out_dir = "runs", db_path, output, format;
  std::int64_t trial = -1;
  bool best = false, force = false;
};

}  // namespace

void add_export_model_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ExportModelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export-model",
      "Write a trial's trained network as ONNX (or .npz arrays) for use outside sweep");
  cmd->add_option("NAME", args->name, "The sweep's name, or its directory (runs/NAME)")->required();
  cmd->add_option("--out", args->out_dir, "Directory of runs (default: runs)")->type_name("DIR");
  cmd->add_option("--db", args->db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
  auto* trial_option =
      cmd->add_option("--trial", args->trial, "The trial's number")->type_name("N");
  cmd->add_flag("--best", args->best, "The best trial (`sweep best`'s; the default)")
      ->excludes(trial_option);
  cmd->add_option("-o,--output", args->output, "File to write (- for standard output)")
      ->type_name("FILE")
      ->required()
      ->check(CLI::Validator(output_path_problem, "FILE"));
  cmd->add_option("--format", args->format,
                  "onnx (default; .npz outputs default to npz) or npz (every tensor by its layer "
                  "name)")
      ->check(CLI::IsMember({"onnx", "npz"}));
  cmd->add_flag("--force", args->force, "Write -o FILE even when it is an SQLite database");
  cmd->footer(
      "The ONNX model takes raw values, float32 (N, C, H, W): an image's pixels 0..255, a CSV\n"
      "row's features as written; it outputs class probabilities (or the value for regression).\n"
      "Examples:\n  sweep export-model quickstart -o quickstart.onnx\n"
      "  sweep export-model quickstart --trial 3 -o trial3.npz");
  cmd->callback([args, &exit_code] {
    const std::optional<std::int64_t> trial =
        args->trial >= 0 ? std::optional<std::int64_t>(args->trial) : std::nullopt;
    const TrialModel found = find_trial_model(args->name, args->out_dir, args->db_path, trial);
    refuse_database_output(args->output, found.db_path, args->force);
    std::string format = args->format;
    if (format.empty())
      format = args->output.size() >= 4 && args->output.substr(args->output.size() - 4) == ".npz"
                   ? "npz"
                   : "onnx";
    const trainer::ModelFile model = trainer::read_model_file(found.path);
    const std::string bytes = format == "npz" ? trainer::model_npz_bytes(model, found.path)
                                              : trainer::onnx_model_bytes(model, found.path);
    if (write_output(args->output, bytes))
      std::cerr << "wrote " << args->output << " (" << format << ", trial " << found.trial << " of "
                << found.sweep << ")\n";
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
