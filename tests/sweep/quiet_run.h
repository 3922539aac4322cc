/*
 * quiet_run.h — the run::RunOptions of a sweep run inside a test: the console's lines into a
 * stream the test reads, Ctrl-C left to the test runner (no handler installed), and the report
 * written only where the test looks at it.
 */
#pragma once

#include <ostream>

#include "sweep/run/run_sweep.h"

namespace sweep::testing {

inline run::RunOptions quiet_run_options(std::ostream& out, bool write_report = true) {
  run::RunOptions options;
  options.out = &out;
  options.handle_sigint = false;
  options.write_report = write_report;
  return options;
}

}  // namespace sweep::testing
