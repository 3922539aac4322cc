/*
 * request_head.h — a request's bytes as they arrive, judged before any thread answers them:
 * complete or not, within the limits or not (serve_limits.h), and the head as it is handed on.
 *
 * The non-obvious decisions:
 *  - A request is complete when its head (up to the first blank line, CRLF CRLF as HTTP/1.1
 *    writes it) and its body (Content-Length bytes) have arrived. A chunked body is refused (411):
 *    the server answers GET and HEAD, which carry none, so only its length is worth knowing.
 *  - Limits are judged on what has arrived so far: a head longer than the limit, or with more
 *    header fields than it, is refused before the rest is read.
 *  - Range and If-Range are taken out of the head handed on: every answer is a page or JSON made
 *    for that request, sent whole (RFC 9110 lets a server ignore Range). httplib would otherwise
 *    answer a Range of many overlapping parts with the body once per part.
 *
 * Thread safety: pure functions.
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sweep::serve {

struct RequestLimits {
  std::size_t max_head_bytes = 0;
  std::size_t max_header_fields = 0;
  std::size_t max_body_bytes = 0;
};

struct RequestScan {
  enum class State {
    incomplete,      // more bytes are needed
    complete,        // head_bytes + body_bytes bytes make the request
    head_too_large,  // 431: the head is longer, or has more fields, than the limits
    body_too_large,  // 413
    chunked,         // 411: a body without a length
    bad_length,      // 400: a Content-Length that is not one number
  };
  State state = State::incomplete;
  std::size_t head_bytes = 0;  // with its blank line
  std::size_t body_bytes = 0;
};

// What `bytes` (from the start of a request) hold so far.
RequestScan scan_request(std::string_view bytes, const RequestLimits& limits);

// The number of empty lines (CRLF or LF) before a request line: a client may send one after a
// body, and they belong to no request.
std::size_t leading_empty_lines(std::string_view bytes);

// `head` (as scan_request measured it) without its Range and If-Range fields.
std::string without_range_fields(std::string_view head);

// Whether the request line (the start of `bytes`) asks for a path under /api/: its errors are
// answered as JSON.
bool asks_for_api(std::string_view bytes);

}  // namespace sweep::serve
