/*
 * serve_command.cpp — `sweep serve [NAME|JOB] [--out DIR] [--port N] [--host H] [--allow-host
 * NAME]...`: the live view of the sweeps in an output directory, on localhost
 * (sweep/serve/live_server.h).
 *
 * The non-obvious decisions:
 *  - Ctrl-C and SIGTERM end wait() in this thread (stop_signals.h); the server's threads start
 *    with both blocked, so none of their waits is interrupted, and stop() runs as ordinary code:
 *    the server ends every wait on its clients and joins its workers at once, and the command
 *    exits 0.
 *  - NAME|JOB resolves as for `sweep report` (sweep_argument.h); the directory served is the one
 *    holding that sweep (a job's own output directory), and `/` opens its page.
 *  - --host and --allow-host are checked as the command line is read: an empty address, or a
 *    name with a port, is a usage error (exit 2) naming the flag, not a server bound somewhere
 *    unexpected (getaddrinfo takes an empty host for [::1]).
 */
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/check.h"
#include "common/format.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/stop_signals.h"
#include "sweep/cli/sweep_argument.h"
#include "sweep/serve/host_check.h"
#include "sweep/serve/live_server.h"
#include "sweep/serve/serve_pages.h"

namespace sweep::cli {

namespace fs = std::filesystem;

namespace {

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

// An address to listen on: anything getaddrinfo takes, but not nothing.
CLI::Validator listen_address() {
  return CLI::Validator(
      [](std::string& input) {
        if (input.find_first_not_of(" \t") != std::string::npos) return std::string();
        return "'" + printable(input) +
               "': expected an address to listen on (127.0.0.1, the default; ::1; 0.0.0.0 for "
               "every interface)";
      },
      "not empty");
}

CLI::Validator allowed_host_name() {
  return CLI::Validator(
      [](std::string& input) {
        const std::string problem = serve::allow_host_problem(input);
        return problem.empty() ? problem : "'" + printable(input) + "': " + problem;
      },
      "no port");
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string target, out_dir = "runs", queue, host = "127.0.0.1";
    std::vector<std::string> allowed_hosts;
    int port = 8787;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "serve", "Serve the sweeps' reports on localhost, live while they run (read-only)");
  c->add_option("NAME|JOB", o->target, "Open this sweep's page at / (a name, or a job's id)");
  c->add_option("--out", o->out_dir, "Directory of runs whose sweeps are listed (default: runs)")
      ->type_name("DIR");
  c->add_option("--port", o->port, "TCP port (default: 8787; 0: any free port)")
      ->type_name("N")
      ->check(CLI::Range(0, 65535));
  c->add_option("--host", o->host,
                "Address to listen on (default: 127.0.0.1; any other makes every sweep in the "
                "directory readable from the network)")
      ->type_name("ADDR")
      ->check(listen_address());
  c->add_option("--allow-host", o->allowed_hosts,
                "Also answer requests that name this server NAME (repeatable; loopback "
                "addresses and localhost always are): a name of this machine on your network")
      ->type_name("NAME")
      ->check(allowed_host_name())
      ->allow_extra_args(false);
  c->add_option("--queue", o->queue, "Queue database, for a job id (default: ~/.sweep/queue.db)")
      ->type_name("PATH");
  c->footer(
      "Pages: / (the sweeps in DIR), /sweep/NAME (its report, updating itself while the sweep\n"
      "runs), /compare?a=NAME&b=NAME (side by side), /api/sweep/NAME (the report's data, JSON).\n"
      "Ctrl-C stops it. The store is only read; the sweep's own run is never slowed or blocked.\n"
      "Examples:\n"
      "  sweep serve                       # http://127.0.0.1:8787/ lists runs/*\n"
      "  sweep serve quickstart            # opens runs/quickstart's live report\n"
      "  sweep serve 3                     # job 3 of `sweep submit`\n"
      "  sweep serve --out /data/runs --port 9000");
  c->callback([o, &exit_code] {
    serve::ServeOptions options{
        .out_dir = o->out_dir, .host = o->host, .port = o->port, .allowed_hosts = o->allowed_hosts};
    if (!o->target.empty()) {
      const SweepArgument sweep = resolve_sweep_argument(o->target, o->out_dir, o->queue);
      options.out_dir = sweep.db_path.parent_path().parent_path();
      options.home_sweep = sweep.db_path.parent_path().filename().string();
    } else if (!fs::is_directory(options.out_dir)) {
      throw Error("no directory " + options.out_dir.string() +
                  " to serve (give the directory of runs with --out DIR)");
    }
    if (!serve::is_loopback_host(o->host))
      std::cerr << "sweep serve: warning: listening on " << printable(o->host)
                << ": every sweep in " << printable(options.out_dir.string())
                << " is readable by anyone who can reach this port (there is no password); a "
                   "request naming this machine by a DNS name is answered only for names given "
                   "with --allow-host\n";

    const StopSignals signals;
    serve::LiveServer server(options);
    const int port = server.bind();
    std::string url = "http://" + url_host(o->host) + ":" + std::to_string(port) + "/";
    // Percent-encoded as the Location header of / is: a name's bytes that are not URL text (0xFF,
    // a space) would reach the terminal raw, and a copied URL would not open the page.
    if (!options.home_sweep.empty()) url += serve::sweep_page_url(options.home_sweep).substr(1);
    std::cout << "sweep serve: " << printable(url) << "  (" << printable(options.out_dir.string())
              << ", read-only; Ctrl-C to stop)" << std::endl;

    std::thread serving;
    signals.quiet([&] {
      serving = std::thread([&] {
        server.serve();
        signals.wake();  // it ended by itself (the listening socket failed)
      });
    });
    signals.wait();
    server.stop();
    serving.join();
    std::cout << "sweep serve: stopped" << std::endl;
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
