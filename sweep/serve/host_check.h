/*
 * host_check.h — which Host headers `sweep serve` answers: its guard against DNS rebinding.
 *
 * A web page on another site can make its own DNS name resolve to 127.0.0.1 and then read this
 * server as if it were that site; the browser still names the page's site in the Host header.
 * So a request is answered only when its Host names this machine in a way no one else's DNS can:
 *  - a literal loopback address: 127.a.b.c in four decimal parts (each 0-255), or [::1];
 *  - `localhost` (any letter case);
 *  - a name the user gave with --allow-host (any letter case);
 *  - when the server listens on another address than loopback (--host), any literal IP address
 *    (a browser only sends one when the user typed it: a DNS name cannot be rebound to it);
 * each with an optional :PORT. Anything else, including a name that merely starts with "127." or
 * "localhost", is refused.
 *
 * Thread safety: pure functions; a HostPolicy is read-only after construction.
 */
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::serve {

// 127.a.b.c (decimal, each part 0-255), ::1 in any spelling, or localhost: a name, without a
// port or brackets.
bool is_loopback_host(std::string_view name);

// A literal IPv4 address in four decimal parts, or a literal IPv6 address (no brackets).
bool is_ip_literal(std::string_view name);

// The name of a Host header without its port, brackets removed ("[::1]:8787" → "::1");
// nullopt when the header is not a name with an optional decimal port.
std::optional<std::string> host_header_name(std::string_view header);

// Why `name` cannot be given to --allow-host, or "" when it can: a DNS name (letters, digits,
// '-', '.') or a literal address, without a port.
std::string allow_host_problem(std::string_view name);

class HostPolicy {
 public:
  // `allowed`: the --allow-host names; `any_ip_literal`: the server listens beyond loopback.
  HostPolicy(std::vector<std::string> allowed, bool any_ip_literal);

  // Whether a request with this Host header is answered.
  bool allows(std::string_view host_header) const;

 private:
  std::vector<std::string> allowed_;  // lower case
  bool any_ip_literal_;
};

}  // namespace sweep::serve
