/*
 * host_check.cpp — the Host names `sweep serve` answers (host_check.h).
 */
#include "sweep/serve/host_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <utility>

namespace sweep::serve {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A decimal number of 1 to `max_digits` digits, at most `max`.
bool decimal_at_most(std::string_view text, std::size_t max_digits, unsigned max) {
  if (!all_digits(text) || text.size() > max_digits) return false;
  unsigned value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value <= max;
}

// a.b.c.d, each part a decimal 0-255; the first part in `first`.
bool dotted_quad(std::string_view name, unsigned* first = nullptr) {
  std::size_t parts = 0;
  while (true) {
    const std::size_t dot = name.find('.');
    const std::string_view part = name.substr(0, dot);
    if (!decimal_at_most(part, 3, 255)) return false;
    if (parts == 0 && first) std::from_chars(part.data(), part.data() + part.size(), *first);
    ++parts;
    if (dot == std::string_view::npos) break;
    name.remove_prefix(dot + 1);
  }
  return parts == 4;
}

std::optional<in6_addr> ipv6_literal(std::string_view name) {
  if (name.empty() || name.find('\0') != std::string_view::npos) return std::nullopt;
  in6_addr address{};
  if (::inet_pton(AF_INET6, std::string(name).c_str(), &address) != 1) return std::nullopt;
  return address;
}

bool dns_name(std::string_view name) {
  if (name.empty() || name.size() > 253 || name.front() == '.' || name.back() == '.') return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; });
}

}  // namespace

bool is_loopback_host(std::string_view name) {
  unsigned first = 0;
  if (dotted_quad(name, &first)) return first == 127;
  if (const std::optional<in6_addr> address = ipv6_literal(name))
    return IN6_IS_ADDR_LOOPBACK(&*address);
  return lower(name) == "localhost";
}

bool is_ip_literal(std::string_view name) {
  return dotted_quad(name) || ipv6_literal(name).has_value();
}

std::optional<std::string> host_header_name(std::string_view header) {
  std::string_view name = header, port;
  if (!header.empty() && header.front() == '[') {
    const std::size_t close = header.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = header.substr(1, close - 1);
    if (!ipv6_literal(name)) return std::nullopt;  // brackets hold an IPv6 address and only that
    const std::string_view rest = header.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      port = rest.substr(1);
      if (!decimal_at_most(port, 5, 65535)) return std::nullopt;
    }
    return std::string(name);
  }
  if (const std::size_t colon = header.find(':'); colon != std::string_view::npos) {
    name = header.substr(0, colon);
    port = header.substr(colon + 1);
    if (!decimal_at_most(port, 5, 65535)) return std::nullopt;
  }
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

std::string allow_host_problem(std::string_view name) {
  std::string_view bare = name;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
    bare = bare.substr(1, bare.size() - 2);
  if (is_ip_literal(bare) || dns_name(bare)) return "";
  if (name.empty()) return "expected a host name, not an empty one";
  if (name.find(':') != std::string_view::npos && !ipv6_literal(bare))
    return "expected a host name without a port (the port is not part of it)";
  return "expected a host name (letters, digits, '-' and '.') or an IP address, as in "
         "sweep.lan or 192.168.1.5";
}

HostPolicy::HostPolicy(std::vector<std::string> allowed, bool any_ip_literal)
    : any_ip_literal_(any_ip_literal) {
  for (std::string& name : allowed) {
    std::string_view bare = name;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']')
      bare = bare.substr(1, bare.size() - 2);
    allowed_.push_back(lower(bare));
  }
}

bool HostPolicy::allows(std::string_view host_header) const {
  const std::optional<std::string> name = host_header_name(host_header);
  if (!name) return false;
  if (is_loopback_host(*name)) return true;
  if (any_ip_literal_ && is_ip_literal(*name)) return true;
  return std::find(allowed_.begin(), allowed_.end(), lower(*name)) != allowed_.end();
}

}  // namespace sweep::serve
