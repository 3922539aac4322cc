/*
 * client_stream.cpp — one request's reads from the gate's bytes, its answer to the socket with a
 * deadline (client_stream.h).
 */
#include "sweep/serve/http/client_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace sweep::serve::http {
namespace {

// "HTTP/1.1 NNN": as much of an answer as names its status.
constexpr std::size_t kStatusLineBytes = 12;

using AddressOf = int (*)(int, sockaddr*, socklen_t*);

void ip_and_port(int fd, AddressOf address_of, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (address_of(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
  char host[NI_MAXHOST] = {}, service[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&address), length, host, sizeof host, service,
                    sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(service);
}

}  // namespace

ClientStream::ClientStream(Connection& connection, int halt_fd,
                           std::chrono::milliseconds send_timeout)
    : connection_(connection), halt_fd_(halt_fd), send_timeout_(send_timeout) {}

bool ClientStream::is_readable() const { return read_at_ < connection_.request_bytes; }

bool ClientStream::is_writable() const { return wait_writable(); }

ssize_t ClientStream::read(char* ptr, size_t size) {
  const std::size_t n = std::min(size, connection_.request_bytes - read_at_);
  std::memcpy(ptr, connection_.bytes.data() + read_at_, n);
  read_at_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t ClientStream::write(const char* ptr, size_t size) {
  if (!send_deadline_) send_deadline_ = Clock::now() + send_timeout_;
  for (;;) {
    const ssize_t sent = ::send(connection_.fd(), ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent >= 0) {
      const std::size_t wanted = kStatusLineBytes - std::min(kStatusLineBytes, status_line_.size());
      status_line_.append(ptr, std::min(wanted, static_cast<std::size_t>(sent)));
      return sent;
    }
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || !wait_writable()) return -1;
  }
}

bool ClientStream::wait_writable() const {
  if (!send_deadline_) send_deadline_ = Clock::now() + send_timeout_;
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(*send_deadline_ - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{connection_.fd(), POLLOUT, 0}, {halt_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) return false;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
    if (fds[0].revents & POLLOUT) return true;
  }
}

void ClientStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip_and_port(connection_.fd(), ::getpeername, ip, port);
}

void ClientStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip_and_port(connection_.fd(), ::getsockname, ip, port);
}

socket_t ClientStream::socket() const { return connection_.fd(); }

int ClientStream::answer_status() const {
  if (status_line_.size() < kStatusLineBytes || !status_line_.starts_with("HTTP/")) return 0;
  return std::atoi(status_line_.c_str() + kStatusLineBytes - 3);
}

std::string ClientStream::after_request() {
  std::string rest = connection_.bytes.substr(connection_.request_bytes);
  connection_.bytes.clear();
  connection_.request_bytes = 0;
  read_at_ = 0;
  return rest;
}

}  // namespace sweep::serve::http
