/*
 * connection_gate.cpp — the thread that reads requests until they are whole
 * (connection_gate.h).
 */
#include "sweep/serve/http/connection_gate.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "common/check.h"
#include "common/json.h"
#include "sweep/serve/serve_pages.h"

namespace sweep::serve::http {
namespace {

// How long, and how much, a refused client's further bytes are read and dropped before the
// close, so that it reads the answer rather than a reset.
constexpr std::chrono::milliseconds kLinger{1000};
constexpr std::size_t kMaxLingerBytes = 1024 * 1024;
constexpr std::size_t kReadChunk = 16 * 1024;

// The status line, the headers every answer of sweep serve carries, and one sentence as the
// request's kind expects it.
std::string error_answer(int status, std::string_view sentence, bool api) {
  const std::string body =
      api ? sweep::json_text(sweep::Json{{"error", sentence}}) : message_page(status, sentence);
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) + "\r\nContent-Type: " +
         (api ? "application/json; charset=utf-8" : "text/html; charset=utf-8") +
         "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: "
         "nosniff\r\nReferrer-Policy: no-referrer\r\n\r\n" +
         body;
}

// Best effort, never waits: a refused client gets the answer if its socket takes it now.
void send_now(int fd, const std::string& text) {
  [[maybe_unused]] const ssize_t sent =
      ::send(fd, text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::string whole_seconds(std::chrono::milliseconds time) {
  const auto ms = time.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

ConnectionGate::ConnectionGate(GateLimits limits, Ready ready, int halt_fd)
    : limits_(limits), ready_(std::move(ready)), halt_fd_(halt_fd) {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  SWEEP_CHECK_SYS(epoll_);
  for (const int fd : {halt_fd_, doorbell_.fd()}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    SWEEP_CHECK_SYS(::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event));
  }
  thread_ = std::thread([this] { run(); });
}

ConnectionGate::~ConnectionGate() {
  stop();
  ::close(epoll_);
}

void ConnectionGate::admit(int fd) {
  Connection connection(fd, open_);
  const std::lock_guard lock(mutex_);
  if (stopping_) return;  // closed as it goes
  arrivals_.push_back({std::move(connection), true});
  doorbell_.signal();
}

void ConnectionGate::resume(Connection connection) {
  const std::lock_guard lock(mutex_);
  if (stopping_) return;
  arrivals_.push_back({std::move(connection), false});
  doorbell_.signal();
}

void ConnectionGate::linger(Connection connection) {
  const std::lock_guard lock(mutex_);
  if (stopping_) return;
  arrivals_.push_back({std::move(connection), false, true});
  doorbell_.signal();
}

void ConnectionGate::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    doorbell_.signal();
  }
  if (thread_.joinable()) thread_.join();
  const std::lock_guard lock(mutex_);
  arrivals_.clear();
}

void ConnectionGate::run() {
  std::array<epoll_event, 64> events{};
  bool halted = false;
  while (!halted) {
    const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()),
                               milliseconds_to_next_deadline());
    if (n < 0 && errno != EINTR) {
      std::cerr << "sweep serve: epoll_wait() failed: " << std::strerror(errno) << "\n";
      break;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[static_cast<std::size_t>(i)].data.fd;
      if (fd == halt_fd_) {
        halted = true;
      } else if (fd == doorbell_.fd()) {
        doorbell_.clear();
      } else {
        read_from(fd);
      }
    }
    if (halted || !take_arrivals()) break;
    expire();
  }
  waiting_.clear();  // closes them
}

bool ConnectionGate::take_arrivals() {
  std::vector<Arrival> arrived;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    arrived.swap(arrivals_);
  }
  for (Arrival& a : arrived) {
    if (a.ending)
      hold_to_linger(std::move(a.connection));
    else
      hold(std::move(a.connection), a.fresh);
  }
  return true;
}

void ConnectionGate::hold(Connection connection, bool fresh) {
  const int fd = connection.fd();
  if (fresh) {
    SWEEP_LOG_ON_ERROR(::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != -1,
                       "fcntl(O_NONBLOCK)");
    // Headers and body go out as separate writes: without this the body may wait for the
    // client's delayed acknowledgement of the headers.
    int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    if (open_ > limits_.max_connections && !evict_oldest()) {
      send_now(fd, error_answer(503,
                                "sweep serve is answering as many connections as it takes (" +
                                    std::to_string(limits_.max_connections) + "); try again",
                                false));
      return;  // closed by `connection`
    }
  }
  Waiting* waiting = watch(std::move(connection), Clock::now() + limits_.head_timeout);
  // A client may have sent its next request already: epoll says nothing about bytes read.
  if (waiting) judge(*waiting);
}

ConnectionGate::Waiting* ConnectionGate::watch(Connection connection, Clock::time_point deadline) {
  const int fd = connection.fd();
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event) != 0) return nullptr;
  return &waiting_
              .emplace(fd, Waiting{.connection = std::move(connection),
                                   .deadline = deadline,
                                   .order = ++held_})
              .first->second;
}

void ConnectionGate::hold_to_linger(Connection connection) {
  if (Waiting* waiting = watch(std::move(connection), Clock::now() + kLinger))
    start_lingering(*waiting);
}

void ConnectionGate::read_from(int fd) {
  const auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  Waiting& waiting = it->second;
  std::array<char, kReadChunk> chunk{};
  for (;;) {
    const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n > 0) {
      const auto got = static_cast<std::size_t>(n);
      if (waiting.lingering) {
        waiting.dropped += got;
        if (waiting.dropped > kMaxLingerBytes) return close(fd);
        continue;
      }
      waiting.connection.bytes.append(chunk.data(), got);
      if (judge(waiting)) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    return close(fd);  // the client closed, or the socket failed
  }
}

// Hands the request on, or refuses it, when its bytes decide; true when they did.
bool ConnectionGate::judge(Waiting& waiting) {
  if (waiting.lingering) return false;
  std::string& bytes = waiting.connection.bytes;
  bytes.erase(0, leading_empty_lines(bytes));
  if (bytes.empty()) return false;
  const RequestScan scan = scan_request(bytes, limits_.request);
  using State = RequestScan::State;
  switch (scan.state) {
    case State::incomplete:
      return false;
    case State::complete: {
      const int fd = waiting.connection.fd();
      ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
      std::string request =
          without_range_fields(std::string_view(bytes).substr(0, scan.head_bytes));
      const std::size_t request_bytes = request.size() + scan.body_bytes;
      request.append(bytes, scan.head_bytes);  // the body, and whatever came after it
      Connection connection = std::move(waiting.connection);
      connection.bytes = std::move(request);
      connection.request_bytes = request_bytes;
      waiting_.erase(fd);
      ready_(std::move(connection));
      return true;
    }
    case State::head_too_large:
      answer_and_linger(waiting, 431,
                        "the request's header is too large: at most " +
                            std::to_string(limits_.request.max_header_fields) + " fields and " +
                            std::to_string(limits_.request.max_head_bytes) + " bytes");
      return true;
    case State::body_too_large:
      answer_and_linger(waiting, 413,
                        "sweep serve takes no request body over " +
                            std::to_string(limits_.request.max_body_bytes) + " bytes");
      return true;
    case State::chunked:
      answer_and_linger(waiting, 411,
                        "sweep serve takes no chunked request body (give its Content-Length)");
      return true;
    case State::bad_length:
      answer_and_linger(waiting, 400, "the request's Content-Length is not one number");
      return true;
  }
  return false;
}

void ConnectionGate::answer_and_linger(Waiting& waiting, int status, std::string_view sentence) {
  const int fd = waiting.connection.fd();
  send_now(fd, error_answer(status, sentence, asks_for_api(waiting.connection.bytes)));
  start_lingering(waiting);
}

void ConnectionGate::start_lingering(Waiting& waiting) {
  ::shutdown(waiting.connection.fd(), SHUT_WR);
  waiting.connection.bytes = std::string();
  waiting.lingering = true;
  waiting.deadline = Clock::now() + kLinger;
}

bool ConnectionGate::evict_oldest() {
  auto oldest = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    const auto earlier = [](const Waiting& a, const Waiting& b) {
      if (a.lingering != b.lingering) return a.lingering;
      return a.deadline != b.deadline ? a.deadline < b.deadline : a.order < b.order;
    };
    if (oldest == waiting_.end() || earlier(it->second, oldest->second)) oldest = it;
  }
  if (oldest == waiting_.end()) return false;
  const Waiting& waiting = oldest->second;
  if (!waiting.lingering && !waiting.connection.bytes.empty())
    send_now(oldest->first,
             error_answer(503,
                          "sweep serve closed this request to make room for another: it had "
                          "not arrived whole",
                          asks_for_api(waiting.connection.bytes)));
  close(oldest->first);
  return true;
}

void ConnectionGate::close(int fd) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  waiting_.erase(fd);
}

void ConnectionGate::expire() {
  const Clock::time_point now = Clock::now();
  std::vector<int> due;
  for (const auto& [fd, waiting] : waiting_)
    if (waiting.deadline <= now) due.push_back(fd);
  for (const int fd : due) {
    Waiting& waiting = waiting_.at(fd);
    if (waiting.lingering || waiting.connection.bytes.empty()) {
      close(fd);  // done lingering, or an idle kept-alive connection
    } else {
      answer_and_linger(
          waiting, 408,
          "the request did not arrive whole within " + whole_seconds(limits_.head_timeout));
    }
  }
}

int ConnectionGate::milliseconds_to_next_deadline() const {
  if (waiting_.empty()) return -1;
  Clock::time_point next = Clock::time_point::max();
  for (const auto& [fd, waiting] : waiting_) next = std::min(next, waiting.deadline);
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(wait, 0, 60'000));
}

}  // namespace sweep::serve::http
