/*
 * version_command.cpp — `sweep version` and `sweep --version`: the version and how this binary
 * was built, one text for both.
 */
#include <iostream>
#include <string>

#include "sweep/cli/commands.h"

namespace sweep::cli {

std::string version_text() {
  return std::string("sweep ") + SWEEP_VERSION + "\n" +
#ifdef SWEEP_HAVE_MPI
         "MPI: yes (mpirun -np N sweep run, srun sweep run)";
#else
         "MPI: no (built without it: one machine only)";
#endif
}

void add_version_command(CLI::App& app, int& exit_code) {
  app.set_version_flag("--version", version_text, "Print the version of sweep (as sweep version)");
  CLI::App* command = app.add_subcommand("version", "Print the version of sweep");
  command->footer("Example:\n  sweep version\n  sweep --version");
  command->callback([&exit_code] {
    std::cout << version_text() << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
