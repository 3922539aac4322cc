/*
 * live_server.h — `sweep serve`: the sweeps of an output directory over HTTP, live.
 *
 *   GET /                     the list of sweeps, or the page of `home_sweep` when one is given
 *   GET /sweeps               the list of sweeps (OUT/NAME/sweep.db): state, trials, best, update
 *   GET /sweep/NAME           the report of one sweep, updating itself while the sweep runs
 *   GET /compare?a=NAME&b=NAME two sweeps side by side
 *   GET /api/sweep/NAME       the report's data as JSON: {sweep, version, data, summary}
 *                             (?since=VERSION&wait=S holds the answer up to S s until the store
 *                             changes, else 304; If-None-Match: "VERSION" answers 304 at once)
 *   GET /api/sweeps           the list as JSON
 *
 * The non-obvious decisions:
 *  - Read-only by construction: only GET (and HEAD) are answered, every store is opened
 *    read-only for one request (sweep_catalog.h), and a name must be one existing directory's, so
 *    nothing a request says can create, change or reach a file outside OUT/NAME/sweep.db.
 *  - Localhost only unless told: bound to a loopback address, and a request whose Host header
 *    does not name this machine in a way no one else's DNS can (host_check.h: a literal loopback
 *    address, localhost, an --allow-host name) is refused (403), so a web page elsewhere cannot
 *    read the sweeps through a DNS name that resolves to 127.0.0.1 (DNS rebinding). A request
 *    with no Host (HTTP/1.1) or more than one is a 400.
 *  - Every client is bounded (serve_limits.h): requests are read whole by one thread before a
 *    worker answers them (http/guarded_server.h), held polls take at most max_held_polls of the
 *    workers, and a sweep's report is read from its store once per change and shared by the
 *    requests that want it (render_cache.h), sent from that one copy.
 *  - A bad request gets its status and one sentence (an HTML page, or {"error": ...} under /api/);
 *    an exception becomes a 500 with sweep::Error's message (written for users) or "internal
 *    error", never an origin or a stack; the port is bound without SO_REUSEPORT, so a port in use
 *    is an error rather than two servers sharing it.
 *  - Waiting polls are held on a condition variable that stop() wakes, and every wait on a
 *    client polls the server's halt flag, so Ctrl-C ends the server at once whatever its clients
 *    do.
 *
 * Thread safety: stop() may be called from any thread (not from a signal handler); the rest from
 * the owning thread.
 *
 *   sweep::serve::LiveServer server({.out_dir = "runs", .port = 8787});
 *   const int port = server.bind();               // throws sweep::Error: port in use, ...
 *   std::jthread stopper([&] { wait_for_ctrl_c(); server.stop(); });
 *   server.serve();                               // until stop()
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sweep/serve/serve_limits.h"

namespace sweep::serve {

struct ServeOptions {
  std::filesystem::path out_dir = "runs";
  std::string host = "127.0.0.1";  // never empty
  int port = 8787;                 // 0: any free port (bind() says which)
  std::string home_sweep{};        // "" = `/` lists the sweeps; else `/` redirects to its page
  int max_wait_seconds = 25;       // the longest a poll (?wait=) is held
  // Polls held at once, at most: each holds one of the workers, which must leave others free
  // (fewer than limits.worker_threads). Past it a poll is answered at once (304); the page asks
  // again 2 s later.
  int max_held_polls = 96;
  // Host names answered beside the loopback ones (--allow-host; host_check.h).
  std::vector<std::string> allowed_hosts{};
  ServeLimits limits{};
};

class LiveServer {
 public:
  // Throws sweep::Error when the options contradict each other (an empty host, held polls
  // that would take every worker).
  explicit LiveServer(ServeOptions options);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  // Binds host:port and returns the port. Throws sweep::Error with the reason: the port is in
  // use, the host is not an address of this machine, a port below 1024 needs privileges.
  int bind();
  // Answers requests until stop(); call after bind(). Returns once every worker has finished.
  void serve();
  void stop();

  // How many times a report was read from a store so far (each change of a sweep read once,
  // however many requests asked for it).
  std::uint64_t report_loads() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sweep::serve
