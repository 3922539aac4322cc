/*
 * guarded_server.h — cpp-httplib's server with the connection handling of `sweep serve` in
 * front of it: httplib binds, accepts, parses and routes; the gate (connection_gate.h) reads
 * each request whole before any thread answers it, and a fixed pool of workers answers.
 *
 * The non-obvious decisions:
 *  - httplib (Debian's compiled 0.11) gives each connection a thread from accept to close, with
 *    a per-read timeout only, and its limits are fixed when the library is built: a client
 *    sending a byte every few seconds would hold a thread for good, and a few hundred would take
 *    them all. Its accepted sockets are taken here instead (the task queue runs the handover
 *    on the accept thread, which only queues the socket for the gate), and httplib's own request
 *    parsing and routing run on a request that has already arrived (Server::process_request
 *    over a ClientStream).
 *  - A worker answers one request and gives a kept-alive connection back to the gate, so an idle
 *    browser connection holds no thread either.
 *  - halt() sets an eventfd that every wait on a client polls (the gate's epoll, a worker's
 *    write), so the server ends at once whatever its clients do.
 *
 * Thread safety: halt() from any thread; serve() from one.
 */
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>

#include "sweep/serve/http/connection_gate.h"
#include "sweep/serve/http/event_fd.h"
#include "sweep/serve/serve_limits.h"

namespace sweep::serve::http {

class GuardedServer : public httplib::Server {
 public:
  explicit GuardedServer(const ServeLimits& limits);
  ~GuardedServer() override;

  // httplib's accept loop on the bound socket (bind_to_port first) until halt() and stop();
  // returns once the gate and every worker have finished.
  bool serve();
  // Every wait on a client ends now; call httplib's stop() after it to end the accept loop.
  void halt();

 private:
  bool process_and_close_socket(socket_t sock) override;
  void answer(Connection& connection);

  const ServeLimits limits_;
  EventFd halt_;
  std::atomic<bool> halted_{false};
  // Made by serve() and ended before it returns; the workers first, since the connections they
  // hold count themselves in the gate.
  std::unique_ptr<ConnectionGate> gate_;
  std::unique_ptr<httplib::ThreadPool> workers_;
};

}  // namespace sweep::serve::http
