/*
 * report_command.cpp — `sweep report NAME|JOB [-o FILE]`: (re)build a sweep's HTML report.
 *
 * The report is a pure function of the database, so this works at any time: after the sweep,
 * while it runs (the trials so far), or for a background job (a number that names no sweep is
 * taken as a job id and resolved through the queue). The write is atomic (temp file + rename);
 * -o - writes the page to standard output, and -o never writes over a database (output_file.h).
 */
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/check.h"
#include "reports/report.h"
#include "store/store.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/output_file.h"
#include "sweep/cli/sweep_argument.h"

namespace sweep::cli {

namespace fs = std::filesystem;

void add_report_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string target, out_dir = "runs", db_path, output, queue;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand("report", "Write a sweep's HTML report (also while it runs)");
  c->add_option("NAME|JOB", o->target, "The sweep's name, or a submitted job's id")->required();
  c->add_option("--out", o->out_dir, "Directory of runs (default: runs)")->type_name("DIR");
  c->add_option("--db", o->db_path, "SQLite database (default: OUT/NAME/sweep.db)")
      ->type_name("PATH");
  c->add_option("-o,--output", o->output,
                "Where to write it (default: beside the database; -: standard output); never "
                "over a database")
      ->type_name("FILE")
      ->check(CLI::Validator(output_path_problem, "FILE"));
  c->add_flag("--force", o->force,
              "Write -o FILE even when it is an SQLite database or one's -wal/-shm file");
  c->add_option("--queue", o->queue, "Queue database, for a job id (default: ~/.sweep/queue.db)")
      ->type_name("PATH");
  c->footer(
      "One self-contained HTML file (charts embedded; opens offline in any browser).\n"
      "Examples:\n"
      "  sweep report quickstart                 # runs/quickstart/report.html\n"
      "  sweep report quickstart -o /tmp/q.html\n"
      "  sweep report quickstart -o - | gzip > q.html.gz\n"
      "  sweep report 3                          # job 3 of `sweep submit`");
  c->callback([o, &exit_code] {
    const SweepArgument sweep =
        o->db_path.empty()
            ? resolve_sweep_argument(o->target, o->out_dir, o->queue, " or --db PATH")
            : SweepArgument{o->db_path, o->target};
    if (!fs::exists(sweep.db_path)) throw Error("no sweep database at " + sweep.db_path.string());
    StoreOptions options;
    options.read_only = true;
    Store store(sweep.db_path, options);
    const std::string out =
        o->output.empty() ? (sweep.db_path.parent_path() / "report.html").string() : o->output;
    // Before the page is made: -o runs/NAME/sweep.db destroyed the sweep it reports on.
    refuse_database_output(out, sweep.db_path, o->force);
    // The path written is said on stdout; the page itself goes there for -o -. The sweep's own
    // report.html is never written through a symbolic link (common/own_file.h); a path the user
    // names with -o is written as a shell's `>` would.
    const std::string page = reports::report_page(store, sweep.name);
    if (o->output.empty()) {
      reports::write_own_file_atomically(out, page);
      std::cout << out << "\n";
    } else if (write_output(out, page)) {
      std::cout << out << "\n";
    }
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
