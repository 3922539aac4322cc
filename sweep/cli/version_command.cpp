/*
 * version_command.cpp — `sweep version`: the version and how this binary was built.
 */
#include <iostream>

#include "sweep/cli/commands.h"

namespace sweep::cli {

void add_version_command(CLI::App& app, int& exit_code) {
  CLI::App* command = app.add_subcommand("version", "Print the version of sweep");
  command->footer("Example:\n  sweep version");
  command->callback([&exit_code] {
    std::cout << "sweep " << SWEEP_VERSION << "\n";
#ifdef SWEEP_HAVE_MPI
    std::cout << "MPI: yes (mpirun -np N sweep run, srun sweep run)\n";
#else
    std::cout << "MPI: no (built without it: one machine only)\n";
#endif
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
