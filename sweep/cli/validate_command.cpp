/*
 * validate_command.cpp — `sweep validate FILE`: the whole config and every trial it expands to
 * are checked; "FILE: ok, 12 trials (grid 4 × 3)" or every problem with its FILE:LINE:COL.
 */
#include <iostream>
#include <memory>

#include "sweep/cli/commands.h"
#include "sweep/config/config.h"

namespace sweep::cli {

namespace {
struct ValidateOptions {
  std::string file;
  std::vector<std::string> overrides;
};
}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand(
      "validate", "Check a config (and every trial it expands to) without running anything");
  command->add_option("FILE", options->file, "The sweep's YAML config")->required();
  add_set_option(*command, options->overrides);
  command->footer(
      "Exit status: 0 when the config is valid, 2 when it is not (every problem is printed as\n"
      "FILE:LINE:COL: key 'KEY': what is wrong).\n"
      "Examples:\n"
      "  sweep validate configs/quickstart.yaml\n"
      "  sweep validate configs/cifar-convnet.yaml --set data.dataset=synthetic");
  command->callback([options, &exit_code] {
    try {
      const config::SweepConfig config = config::load_config(options->file, options->overrides);
      print_config_warnings(config.warnings);
      const std::uint64_t n = config.trial_count();
      std::cout << options->file << ": ok, " << n << (n == 1 ? " trial" : " trials") << " ("
                << config.shape() << ")\n";
      exit_code = kExitOk;
    } catch (const config::ConfigError& e) {
      exit_code = report_config_error(options->file, e.messages());
    }
  });
}

}  // namespace sweep::cli
