/*
 * external_trainer_reader.cpp — the `trainer` section: its command split as each trial will split
 * it, and its program and script checked (command_check) before anything runs.
 */
#include "sweep/config/external_trainer_reader.h"

#include <filesystem>

#include "common/check.h"
#include "scheduler/command_trial.h"
#include "sweep/config/command_check.h"

namespace sweep::config {

void read_external_trainer(MapReader r, std::optional<ExternalTrainerSpec>& out) {
  if (!r.present()) return;
  ExternalTrainerSpec spec;
  if (!r.text("command", spec.command) && !r.has("command"))
    r.error("command", "trainer needs command: \"program --flag {training.learning_rate}\"");
  else if (spec.command.find_first_not_of(" \t") == std::string::npos && r.has("command"))
    r.error("command", "the command is empty");
  else if (r.has("command")) {
    // Split now as each trial will (no shell: quotes and escapes as a shell reads them), so an
    // unbalanced quote is a config error, not a failure of every trial.
    try {
      const std::vector<std::string> argv = scheduler::split_command_template(spec.command);
      std::error_code error;
      const std::filesystem::path here = std::filesystem::current_path(error);
      if (!error)
        if (const std::string missing = check_command_files(argv, here); !missing.empty())
          r.error("command", missing);
    } catch (const Error& e) {
      r.error("command", e.what());
    }
  }
  r.number("metric_timeout", spec.metric_timeout, Range::at_least(0));
  r.finish();
  out = spec;
}

}  // namespace sweep::config
