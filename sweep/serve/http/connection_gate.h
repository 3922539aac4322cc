/*
 * connection_gate.h — one thread that reads the requests of every open connection of
 * `sweep serve` until each has arrived whole, and only then hands it to a worker.
 *
 * The non-obvious decisions:
 *  - One epoll thread waits on all sockets at once, so a client that sends a byte now and then
 *    costs a socket and a small buffer, never one of the threads that answer (serve_limits.h).
 *  - Every connection the gate holds has a deadline: head_timeout after it opened or after its
 *    previous answer. At the deadline a partly sent request is answered 408 and an idle
 *    kept-alive connection closed silently.
 *  - A request that breaks a limit (request_head.h) is answered with its status and one sentence
 *    (an HTML page, or {"error": ...} under /api/), the sending side shut, and what the client
 *    still sends read and dropped for a moment before the close (nginx's lingering close), so
 *    the client can read the answer instead of a reset.
 *  - A worker's answer that ends the connection (framing.h: httplib's 400 and 414 among them)
 *    comes back here to linger the same way, so bytes the client sent ahead are never read as
 *    its next request.
 *  - Past max_connections (all of them: held here, waiting for a worker or being answered), the
 *    connection here with the oldest deadline is closed to admit the new one; with none here,
 *    the new one is answered 503 and closed.
 *  - The halt flag (an eventfd) ends the thread at once, closing what it holds.
 *
 * Thread safety: admit() and resume() from any thread; `ready` runs on the gate's thread and
 * must not block.
 */
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "sweep/serve/http/connection.h"
#include "sweep/serve/http/event_fd.h"
#include "sweep/serve/request_head.h"

namespace sweep::serve::http {

struct GateLimits {
  RequestLimits request;
  std::chrono::milliseconds head_timeout{0};
  std::size_t max_connections = 0;
};

class ConnectionGate {
 public:
  // Gets each connection whose request has arrived whole; its bytes are that request (Range and
  // If-Range taken out of the head) and whatever the client sent after it.
  using Ready = std::function<void(Connection)>;

  // `halt_fd`: readable once the server stops.
  ConnectionGate(GateLimits limits, Ready ready, int halt_fd);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  void admit(int fd);                  // a socket just accepted; the gate owns it from now
  void resume(Connection connection);  // kept alive after an answer, for its next request
  // Answered with a status that ends it (framing.h): its sending side shut, what the client
  // still sends read and dropped for a moment, then closed.
  void linger(Connection connection);
  // Ends the thread and closes every connection held; later ones are closed at once.
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  struct Waiting {
    Connection connection;
    Clock::time_point deadline;
    std::uint64_t order = 0;  // when it came, among those with the same deadline
    bool lingering = false;   // answered with an error: reading only to drop, until the close
    std::size_t dropped = 0;
  };
  struct Arrival {
    Connection connection;
    bool fresh;           // just accepted (counts against max_connections)
    bool ending = false;  // answered for the last time: only lingers
  };

  void run();
  bool take_arrivals();
  void hold(Connection connection, bool fresh);
  // Registers the connection with epoll and keeps it until `deadline`; null when epoll refused
  // it (the connection is then closed, as it goes out of scope).
  Waiting* watch(Connection connection, Clock::time_point deadline);
  void hold_to_linger(Connection connection);
  void start_lingering(Waiting& waiting);
  void read_from(int fd);
  bool judge(Waiting& waiting);
  void answer_and_linger(Waiting& waiting, int status, std::string_view sentence);
  bool evict_oldest();
  void close(int fd);
  void expire();
  int milliseconds_to_next_deadline() const;

  const GateLimits limits_;
  const Ready ready_;
  const int halt_fd_;
  std::atomic<std::size_t> open_{0};
  int epoll_ = -1;
  EventFd doorbell_;
  std::mutex mutex_;
  std::vector<Arrival> arrivals_;             // under mutex_
  bool stopping_ = false;                     // under mutex_
  std::unordered_map<int, Waiting> waiting_;  // the gate's thread only
  std::uint64_t held_ = 0;                    // the gate's thread only
  std::thread thread_;
};

}  // namespace sweep::serve::http
