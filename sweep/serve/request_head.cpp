/*
 * request_head.cpp — completeness, limits and Range removal of an arriving request
 * (request_head.h).
 */
#include "sweep/serve/request_head.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace sweep::serve {
namespace {

constexpr std::string_view kHeadEnd = "\r\n\r\n";

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

// Calls `field(name, value)` for each header field line of a complete head (not the request
// line); lines without a colon are passed with the whole line as name and an empty value.
template <typename Field>
void for_each_field(std::string_view head, Field field) {
  std::size_t at = head.find('\n');
  while (at != std::string_view::npos && at + 1 < head.size()) {
    const std::size_t end = head.find('\n', at + 1);
    const std::string_view line =
        head.substr(at + 1, (end == std::string_view::npos ? head.size() : end) - at - 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      field(trimmed(line), std::string_view());
    else
      field(line.substr(0, colon), trimmed(line.substr(colon + 1)));
    at = end;
  }
}

}  // namespace

RequestScan scan_request(std::string_view bytes, const RequestLimits& limits) {
  using State = RequestScan::State;
  RequestScan scan;
  const std::size_t end = bytes.find(kHeadEnd);
  const std::string_view head =
      end == std::string_view::npos ? bytes : bytes.substr(0, end + kHeadEnd.size());
  // Lines ended so far, less the request line's (and the blank line's, once it came).
  const auto lines = static_cast<std::size_t>(std::count(head.begin(), head.end(), '\n'));
  const std::size_t fields =
      end == std::string_view::npos ? (lines > 0 ? lines - 1 : 0) : lines - 2;
  if (head.size() > limits.max_head_bytes || fields > limits.max_header_fields) {
    scan.state = State::head_too_large;
    return scan;
  }
  if (end == std::string_view::npos) return scan;
  scan.head_bytes = head.size();

  std::optional<std::string_view> length;
  bool chunked = false, conflicting = false;
  for_each_field(head, [&](std::string_view name, std::string_view value) {
    if (same_name(name, "Transfer-Encoding")) chunked = true;
    if (same_name(name, "Content-Length")) {
      if (length && *length != value) conflicting = true;
      length = value;
    }
  });
  if (chunked) {
    scan.state = State::chunked;
    return scan;
  }
  if (length) {
    const std::string_view text = *length;
    std::size_t body = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), body);
    if (conflicting || text.empty() || ec == std::errc::invalid_argument ||
        ptr != text.data() + text.size() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
      scan.state = State::bad_length;
      return scan;
    }
    if (ec == std::errc::result_out_of_range || body > limits.max_body_bytes) {
      scan.state = State::body_too_large;
      return scan;
    }
    scan.body_bytes = body;
  }
  if (bytes.size() >= scan.head_bytes + scan.body_bytes) scan.state = State::complete;
  return scan;
}

std::size_t leading_empty_lines(std::string_view bytes) {
  std::size_t skip = 0;
  while (true) {
    if (bytes.substr(skip, 2) == "\r\n") {
      skip += 2;
    } else if (bytes.substr(skip, 1) == "\n") {
      skip += 1;
    } else {
      return skip;
    }
  }
}

std::string without_range_fields(std::string_view head) {
  std::string out;
  out.reserve(head.size());
  std::size_t at = 0;
  bool request_line = true;
  while (at < head.size()) {
    const std::size_t end = head.find('\n', at);
    const std::size_t next = end == std::string_view::npos ? head.size() : end + 1;
    const std::string_view line = head.substr(at, next - at);
    const std::string_view name = line.substr(0, std::min(line.find(':'), line.size()));
    if (request_line || !(same_name(name, "Range") || same_name(name, "If-Range"))) out += line;
    request_line = false;
    at = next;
  }
  return out;
}

bool asks_for_api(std::string_view bytes) {
  const std::size_t space = bytes.find(' ');
  if (space == std::string_view::npos) return false;
  return bytes.substr(space + 1, 5) == "/api/";
}

}  // namespace sweep::serve
