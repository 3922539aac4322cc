/*
 * serve_limits.h — every bound `sweep serve` puts on a client, in one place (the limits table of
 * docs/serve.md lists the same).
 *
 * The non-obvious decisions:
 *  - A request reaches a worker thread only whole: its head and its body are read by one gate
 *    thread (http/connection_gate.h) for every connection at once, each within head_timeout of
 *    the connection opening (or of its previous answer, on a kept-alive connection). A client
 *    that sends slowly therefore holds a socket and a small buffer, never a thread, and a
 *    stalled one is closed when its time is up (408), as nginx's client_header_timeout does.
 *  - Sizes are refused as they arrive, not after: a head past max_head_bytes or max_header_fields
 *    is answered 431 and closed without reading the rest, a body past max_body_bytes 413 (the
 *    server answers GET and HEAD only, which carry none).
 *  - Past max_connections the connection that has waited longest for its head is closed (503)
 *    to make room, so a flood of idle sockets cannot lock out a fresh request; only when every
 *    connection is being answered is the new one refused.
 *  - The report of a sweep is read from its store once per change of the store (the change
 *    marker of store_version.h) and shared by every request that wants it: at most
 *    max_concurrent_loads reads run at once, and the texts kept stay under cache_bytes.
 *
 * Thread safety: plain values.
 */
#pragma once

#include <chrono>
#include <cstddef>

namespace sweep::serve {

struct ServeLimits {
  // The head and body of a request must have arrived within this long of the connection opening
  // or of its previous answer; an idle kept-alive connection is closed after it too.
  std::chrono::milliseconds head_timeout{5000};
  // An answer the client does not take within this long of its first byte is cut off.
  std::chrono::milliseconds send_timeout{10000};
  std::size_t max_head_bytes = 32 * 1024;  // request line and header fields together
  std::size_t max_header_fields = 100;
  std::size_t max_body_bytes = 16 * 1024;
  std::size_t max_connections = 512;
  std::size_t max_requests_per_connection = 100;
  // Threads answering whole requests. Held polls (ServeOptions::max_held_polls) may take only
  // part of them, so the others always answer pages and the API.
  std::size_t worker_threads = 128;
  std::size_t max_concurrent_loads = 2;        // report reads from stores at once, all sweeps
  std::size_t cache_bytes = 64 * 1024 * 1024;  // rendered pages and JSON kept between changes
};

}  // namespace sweep::serve
