/*
 * guarded_server.cpp — httplib behind the gate and a pool of workers (guarded_server.h).
 */
#include "sweep/serve/http/guarded_server.h"

#include <sys/socket.h>

#include <chrono>
#include <iostream>

#include "sweep/serve/http/client_stream.h"
#include "sweep/serve/http/framing.h"

namespace sweep::serve::http {
namespace {

// Runs each task where it is queued: httplib's accept loop queues "process this socket", which
// here only hands the socket to the gate.
class HandOver final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> task) override { task(); }
  void shutdown() override {}
};

}  // namespace

GuardedServer::GuardedServer(const ServeLimits& limits) : limits_(limits) {
  new_task_queue = [] { return new HandOver; };  // httplib owns (and deletes) it
  // What the Keep-Alive header of each answer says; the gate and the workers keep to it.
  set_keep_alive_max_count(limits_.max_requests_per_connection);
  set_keep_alive_timeout(std::chrono::ceil<std::chrono::seconds>(limits_.head_timeout).count());
  set_payload_max_length(limits_.max_body_bytes);
}

GuardedServer::~GuardedServer() { halt(); }

bool GuardedServer::serve() {
  workers_ = std::make_unique<httplib::ThreadPool>(limits_.worker_threads);
  gate_ = std::make_unique<ConnectionGate>(
      GateLimits{.request = {.max_head_bytes = limits_.max_head_bytes,
                             .max_header_fields = limits_.max_header_fields,
                             .max_body_bytes = limits_.max_body_bytes},
                 .head_timeout = limits_.head_timeout,
                 .max_connections = limits_.max_connections},
      [this](Connection connection) {
        // httplib's pool takes copyable tasks only.
        auto held = std::make_shared<Connection>(std::move(connection));
        workers_->enqueue([this, held] { answer(*held); });
      },
      halt_.fd());
  // httplib listens with a backlog of 5, fixed when the library is built: a burst of connections
  // past it waits for the clients' SYN retransmissions (1 s, then 3 s). listen() again on the
  // bound socket sets the kernel's largest instead.
  if (svr_sock_ != INVALID_SOCKET) ::listen(svr_sock_, SOMAXCONN);
  const bool listened = listen_after_bind();
  halt();
  gate_->stop();         // no request reaches the workers after this
  workers_->shutdown();  // each ends its answer; the ones still queued are closed unanswered
  workers_.reset();
  gate_.reset();
  return listened;
}

void GuardedServer::halt() {
  if (!halted_.exchange(true)) halt_.signal();
}

bool GuardedServer::process_and_close_socket(socket_t sock) {
  gate_->admit(sock);
  return true;
}

void GuardedServer::answer(Connection& connection) {
  if (halted_) return;
  try {
    ClientStream stream(connection, halt_.fd(), limits_.send_timeout);
    const bool last = connection.answered + 1 >= limits_.max_requests_per_connection;
    bool client_closes = false;
    const bool answered = process_request(stream, last, client_closes, nullptr);
    if (halted_) return;
    if (ends_framing_trust(stream.answer_status())) return gate_->linger(std::move(connection));
    if (!answered || client_closes || last) return;
    connection.bytes = stream.after_request();
    ++connection.answered;
  } catch (const std::exception& e) {
    // httplib turns a route's exceptions into answers; this is one of its own (out of memory).
    std::cerr << "sweep serve: a request failed: " << e.what() << "\n";
    return;
  } catch (...) {
    std::cerr << "sweep serve: a request failed: unknown exception\n";
    return;
  }
  gate_->resume(std::move(connection));
}

}  // namespace sweep::serve::http
