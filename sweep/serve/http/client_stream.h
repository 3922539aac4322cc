/*
 * client_stream.h — the httplib::Stream a worker of `sweep serve` answers one request through:
 * reads come from the bytes the gate collected (the whole request is there), writes go to the
 * socket.
 *
 * The non-obvious decisions:
 *  - A read never waits on the client: the gate handed over the request whole, so a read past
 *    it finds nothing (end of the request), and a slow client cannot hold a worker by sending.
 *    What the client sent after the request (its next one, or a body httplib left unread) is
 *    never read here.
 *  - A write waits for the client only until send_timeout after the answer's first byte, and not
 *    at all once the server halts (the halt eventfd is polled beside the socket), so a client
 *    that stops reading holds a worker a bounded time and never delays the server's exit.
 *
 * Thread safety: one worker at a time.
 */
#pragma once

#include <httplib.h>

#include <chrono>
#include <optional>
#include <string>

#include "sweep/serve/http/connection.h"

namespace sweep::serve::http {

class ClientStream final : public httplib::Stream {
 public:
  ClientStream(Connection& connection, int halt_fd, std::chrono::milliseconds send_timeout);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override;

  // What the client sent after this request (its next one, sent ahead), taken out.
  std::string after_request();
  // The status of the answer written so far (its status line "HTTP/1.1 NNN"); 0 before it.
  int answer_status() const;

 private:
  using Clock = std::chrono::steady_clock;
  // Waits until the socket takes more bytes; false at the deadline, on halt or a socket error.
  bool wait_writable() const;

  Connection& connection_;
  std::size_t read_at_ = 0;
  const int halt_fd_;
  const std::chrono::milliseconds send_timeout_;
  mutable std::optional<Clock::time_point> send_deadline_;  // set by the first write
  std::string status_line_;  // the answer's first bytes, as far as its status code
};

}  // namespace sweep::serve::http
