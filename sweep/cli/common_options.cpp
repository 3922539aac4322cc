/*
 * common_options.cpp — pieces shared by several subcommands: the --set option and the printing of
 * config errors (one problem per line on stderr, so editors and grep can use them).
 */
#include <iostream>

#include "common/format.h"
#include "sweep/cli/commands.h"

namespace sweep::cli {

void add_set_option(CLI::App& command, std::vector<std::string>& overrides) {
  command
      .add_option("--set", overrides,
                  "Override a config value before validation, as YAML (repeatable): "
                  "--set training.epochs=2 --set 'model.hidden=[512, 256]'")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
}

int report_config_error(const std::string& file, const std::vector<std::string>& messages) {
  for (const std::string& line : messages) std::cerr << printable(line) << "\n";
  std::cerr << "sweep: " << messages.size() << (messages.size() == 1 ? " problem" : " problems")
            << (file.empty() ? std::string() : " in " + printable(file)) << "; nothing was run\n";
  return kExitUsage;
}

void print_config_warnings(const std::vector<std::string>& warnings) {
  for (const std::string& line : warnings) std::cerr << printable(line) << "\n";
}

}  // namespace sweep::cli
