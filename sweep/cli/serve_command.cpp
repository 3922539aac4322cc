/*
 * serve_command.cpp — `sweep serve [NAME|JOB] [--out DIR] [--port N] [--host H]`: the live view
 * of the sweeps in an output directory, on localhost (sweep/serve/live_server.h).
 *
 * The non-obvious decisions:
 *  - Ctrl-C and SIGTERM are taken by sigwait in this thread, not by a handler: they are blocked
 *    before the server starts its threads (which inherit the mask), so no worker is interrupted
 *    and stop() runs as ordinary code; the server then ends its held polls and joins its
 *    workers, and the command exits 0.
 *  - NAME|JOB resolves as for `sweep report` (sweep_argument.h); the directory served is the one
 *    holding that sweep (a job's own output directory), and `/` opens its page.
 */
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "common/check.h"
#include "common/format.h"
#include "sweep/cli/commands.h"
#include "sweep/cli/sweep_argument.h"
#include "sweep/serve/live_server.h"

namespace sweep::cli {

namespace fs = std::filesystem;

namespace {

// Blocks SIGINT and SIGTERM in this thread (and the threads it starts) while alive.
class BlockedStopSignals {
 public:
  BlockedStopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &set_, &previous_) != 0)
      throw Error("cannot block SIGINT and SIGTERM to wait for them");
  }
  ~BlockedStopSignals() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  BlockedStopSignals(const BlockedStopSignals&) = delete;
  BlockedStopSignals& operator=(const BlockedStopSignals&) = delete;

  // Waits up to `timeout` for one of them; true when one came.
  bool wait(const timespec& timeout) const { return sigtimedwait(&set_, nullptr, &timeout) > 0; }

 private:
  sigset_t set_{}, previous_{};
};

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string target, out_dir = "runs", queue, host = "127.0.0.1";
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
      ->type_name("ADDR");
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
    serve::ServeOptions options{.out_dir = o->out_dir, .host = o->host, .port = o->port};
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
                << " is readable by anyone who can reach this port (there is no password)\n";

    const BlockedStopSignals signals;  // before the server starts any thread
    serve::LiveServer server(options);
    const int port = server.bind();
    std::string url = "http://" + url_host(o->host) + ":" + std::to_string(port) + "/";
    if (!options.home_sweep.empty()) url += "sweep/" + options.home_sweep;
    std::cout << "sweep serve: " << printable(url) << "  (" << printable(options.out_dir.string())
              << ", read-only; Ctrl-C to stop)" << std::endl;

    std::atomic<bool> ended{false};
    std::thread serving([&] {
      server.serve();
      ended = true;
    });
    const timespec tick{0, 200'000'000};
    while (!ended && !signals.wait(tick)) {
    }
    server.stop();
    serving.join();
    std::cout << "sweep serve: stopped" << std::endl;
    exit_code = kExitOk;
  });
}

}  // namespace sweep::cli
