// `sweep serve` against hostile and careless clients (issue 42), the server in-process on
// 127.0.0.1 and real sockets written byte by byte: Host names that only look like loopback,
// Range, oversized heads and bodies, heads that never finish, slow connections beside held polls,
// more connections than the limit, stop() with all of them open, and one store read for many
// requests. Every wait is bounded; where a time is checked, the limit it guards is far away.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/json.h"
#include "store/store.h"
#include "sweep/serve/live_server.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"
#include "tests/serve/serve_test_util.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::RawClient;
using testing::status_of;

class ServeHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(out_.path() / "alpha" / "sweep.db");
    reports::testing::store_sweep(store, reports::testing::make_synthetic_sweep({.name = "alpha"}));
  }
  void TearDown() override { stop(); }

  void start(ServeOptions options = {}) {
    options.out_dir = out_.path();
    options.port = 0;
    server_ = std::make_unique<LiveServer>(options);
    port_ = server_->bind();
    serving_ = std::thread([this] { server_->serve(); });
  }
  void stop() {
    if (!server_) return;
    server_->stop();
    serving_.join();
    server_.reset();
  }
  httplib::Result get(const std::string& path, const httplib::Headers& headers = {}) const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    return client.Get(path.c_str(), headers);
  }
  // The version a poll names once the store's files have settled (store_version.h).
  std::string settled_version() const {
    std::this_thread::sleep_for(1100ms);
    return sweep::Json::parse(get("/api/sweep/alpha")->body)["version"];
  }
  // A request whose head stops short of its end, as a slow client leaves it.
  std::unique_ptr<RawClient> slow_client() const {
    auto client = std::make_unique<RawClient>(port_);
    EXPECT_TRUE(client->send("GET /api/sweeps HTTP/1.1\r\nHost: local"));
    return client;
  }

  testing::TempDir out_;
  std::unique_ptr<LiveServer> server_;
  std::thread serving_;
  int port_ = 0;
};

// Issue 42, item 1: `Host: 127.attacker.example` was answered (any name starting "127." passed).
TEST_F(ServeHardening, HostNamesThatOnlyLookLikeLoopbackAreRefused) {
  start({.allowed_hosts = {"sweep.lan"}});
  std::string port = ":";
  port += std::to_string(port_);
  for (const std::string& host : std::vector<std::string>{
           "127.attacker.example", "127.attacker.example" + port, "127.0.0.1.attacker.example",
           "localhost.attacker.example" + port, "attacker.example", "sweep.lan.attacker.example"}) {
    auto r = get("/api/sweeps", {{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 403) << host;
    EXPECT_EQ(r->body.find("alpha"), std::string::npos) << host;
    EXPECT_TRUE(sweep::Json::parse(r->body).contains("error")) << r->body;
  }
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1" + port, "127.4.5.6", "localhost" + port, "[::1]" + port,
                                "sweep.lan" + port, "SWEEP.LAN"}) {
    auto r = get("/api/sweeps", {{"Host", host}});
    ASSERT_TRUE(r) << host;
    EXPECT_EQ(r->status, 200) << host;
  }
  // HTTP/1.1 names its host once: none, or two, is a bad request.
  const auto answer = [&](const std::string& request) {
    RawClient client(port_);
    EXPECT_TRUE(client.send(request));
    return client.read_answer(10s);
  };
  EXPECT_EQ(status_of(answer("GET /api/sweeps HTTP/1.1\r\n\r\n")), 400);
  EXPECT_EQ(status_of(answer("GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\nHost: "
                             "attacker.example\r\n\r\n")),
            400);
  EXPECT_EQ(status_of(answer("GET /api/sweeps HTTP/1.0\r\n\r\n")), 200);
}

// Item 3: `Range: bytes=0-,0-,...` x100 made a 110 MB answer of one page. Range is ignored:
// every answer is whole, once.
TEST_F(ServeHardening, RangeIsIgnoredSoEveryAnswerIsWholeAndOnce) {
  start();
  auto whole = get("/sweep/alpha");
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200);
  std::string ranges = "bytes=0-";
  for (int i = 1; i < 100; ++i) ranges += ",0-";
  for (const std::string& range : {ranges, std::string("bytes=0-9"), std::string("bytes=-5")}) {
    auto r = get("/sweep/alpha", {{"Range", range}, {"If-Range", "\"x\""}});
    ASSERT_TRUE(r) << range;
    EXPECT_EQ(r->status, 200) << range;
    EXPECT_EQ(r->body.size(), whole->body.size()) << range;
    EXPECT_FALSE(r->has_header("Content-Range")) << range;
  }
  httplib::Client client("127.0.0.1", port_);
  auto head = client.Head("/sweep/alpha");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->get_header_value("Accept-Ranges"), "none");
  auto api = get("/api/sweep/alpha", {{"Range", ranges}});
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 200);
  EXPECT_TRUE(sweep::Json::accept(api->body)) << api->body.substr(0, 200);
}

// Item 4: 25,000 header fields of 4 KB were read whole and answered 200 (+140 MB). Now a head
// past 100 fields or 32 KiB is answered 431 and the rest is not read.
TEST_F(ServeHardening, HeadsPastTheLimitsAre431AndNotReadToTheirEnd) {
  start();
  {
    std::string request = "GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\n";
    for (int i = 0; i < 100; ++i) request += "X-" + std::to_string(i) + ": y\r\n";
    RawClient client(port_);
    ASSERT_TRUE(client.send(request + "\r\n"));
    const std::string answer = client.read_until_closed(10s);
    EXPECT_EQ(status_of(answer), 431) << answer.substr(0, 200);
    EXPECT_NE(answer.find("{\"error\":\"the request's header is too large"), std::string::npos)
        << answer;
  }
  {
    RawClient client(port_);
    ASSERT_TRUE(client.send("GET /sweeps HTTP/1.1\r\nHost: localhost\r\n"));
    const std::string field = ": " + std::string(4000, 'a') + "\r\n";
    std::size_t sent = 0;
    int fields = 0;
    for (; fields < 25'000; ++fields) {
      const std::string line = "X-Filler-" + std::to_string(fields) + field;
      if (!client.send(line)) break;
      sent += line.size();
    }
    EXPECT_LT(fields, 25'000) << "the server read 100 MB of header";
    const std::string answer = client.read_until_closed(10s);
    EXPECT_TRUE(answer.empty() || status_of(answer) == 431) << answer.substr(0, 200);
    RecordProperty("header_bytes_sent_before_the_close", std::to_string(sent));
  }
  {
    RawClient client(port_);  // one line of 40 KB: past the 32 KiB head
    ASSERT_TRUE(client.send(
        "GET /sweeps HTTP/1.1\r\nHost: localhost\r\nX: " + std::string(40'000, 'a') + "\r\n\r\n"));
    EXPECT_EQ(status_of(client.read_until_closed(10s)), 431);
  }
  auto after = get("/api/sweeps");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

TEST_F(ServeHardening, RequestBodiesAreBoundedBeforeAnyThreadReadsThem) {
  start();
  const auto answer = [&](const std::string& request) {
    RawClient client(port_);
    EXPECT_TRUE(client.send(request));
    return status_of(client.read_answer(10s));
  };
  EXPECT_EQ(answer("GET /sweeps HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\n"),
            413);
  EXPECT_EQ(answer("GET /sweeps HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"),
            411);
  EXPECT_EQ(answer("GET /sweeps HTTP/1.1\r\nHost: localhost\r\nContent-Length: x\r\n\r\n"), 400);
  EXPECT_EQ(answer("POST /sweeps HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc"),
            405);
}

// Item 5: a request whose head does not arrive whole within the head timeout is answered 408 and
// closed; an idle connection is closed silently.
TEST_F(ServeHardening, AHeadThatDoesNotArriveInTimeIs408AndClosed) {
  ServeOptions options;
  options.limits.head_timeout = 1s;
  start(options);
  const std::string request = "GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\n\r\n";
  RawClient slow(port_), idle(port_);
  const auto t0 = Clock::now();
  // A byte every 200 ms, never the last one, until the server answers or 10 s pass.
  for (std::size_t i = 0; i + 1 < request.size() && Clock::now() - t0 < 10s; ++i) {
    if (slow.heard_from_server() || !slow.send(request.substr(i, 1))) break;
    std::this_thread::sleep_for(200ms);
  }
  bool closed = false;
  const std::string answer = slow.read_until_closed(10s, &closed);
  EXPECT_GE(Clock::now() - t0, 1s) << "cut before its time";
  EXPECT_EQ(status_of(answer), 408) << answer;
  EXPECT_TRUE(closed);
  bool idle_closed = false;
  EXPECT_EQ(idle.read_until_closed(10s, &idle_closed), "");
  EXPECT_TRUE(idle_closed);
}

// Item 5: 40 slow connections and 100 long polls left a plain GET waiting 56 s. Slow heads hold
// no worker, held polls only max_held_polls of them: with 4 workers, 40 slow connections and 6
// polls, a fresh GET is answered, and the polls past the limit are answered at once.
TEST_F(ServeHardening, SlowClientsAndHeldPollsNeverTakeEveryWorker) {
  ServeOptions options;
  options.max_held_polls = 2;
  options.limits.worker_threads = 4;
  options.limits.head_timeout = 60s;  // the slow ones stay for the whole test
  start(options);
  const std::string version = settled_version();
  std::vector<std::unique_ptr<RawClient>> slow, polls;
  for (int i = 0; i < 40; ++i) slow.push_back(slow_client());
  for (int i = 0; i < 6; ++i) {
    polls.push_back(std::make_unique<RawClient>(port_));
    ASSERT_TRUE(polls.back()->send("GET /api/sweep/alpha?since=" + version +
                                   "&wait=20 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  }
  const auto t0 = Clock::now();
  auto fresh = get("/api/sweeps");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->status, 200);
  EXPECT_LT(Clock::now() - t0, 10s);
  // Two polls held (20 s), the four past the limit answered at once.
  std::vector<bool> heard(polls.size(), false);
  int answered = 0;
  for (const auto deadline = Clock::now() + 10s; answered < 4 && Clock::now() < deadline;) {
    for (std::size_t i = 0; i < polls.size(); ++i) {
      if (heard[i] || !polls[i]->heard_from_server()) continue;
      heard[i] = true;
      ++answered;
      EXPECT_EQ(status_of(polls[i]->read_answer(10s)), 304);
    }
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(answered, 4);
  for (std::size_t i = 0; i < polls.size(); ++i) {
    if (heard[i]) continue;
    EXPECT_FALSE(polls[i]->heard_from_server()) << "a held poll was answered";
  }
}

// Past max_connections the connection that has waited longest for its head makes room, so a
// flood of idle sockets cannot lock a fresh request out.
TEST_F(ServeHardening, PastMaxConnectionsTheOldestWaitingOneMakesRoom) {
  ServeOptions options;
  options.limits.max_connections = 8;
  options.limits.head_timeout = 60s;
  start(options);
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 8; ++i) slow.push_back(slow_client());
  RawClient fresh(port_);
  ASSERT_TRUE(fresh.send("GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(status_of(fresh.read_answer(10s)), 200);
  bool closed = false;
  const std::string oldest = slow.front()->read_until_closed(10s, &closed);
  EXPECT_TRUE(closed) << "the oldest slow connection is still open";
  EXPECT_TRUE(oldest.empty() || status_of(oldest) == 503) << oldest;
  EXPECT_FALSE(slow.back()->heard_from_server()) << "only the oldest made room";
}

// Item 6: stop() waited for slow clients to leave. Now it ends at once: the slow connections are
// closed by the stop (no 408: their head timeout is a minute away), held polls get their 304.
TEST_F(ServeHardening, StopEndsAtOnceWhateverClientsDo) {
  ServeOptions options;
  options.limits.head_timeout = 60s;
  start(options);
  const std::string version = settled_version();
  std::vector<std::unique_ptr<RawClient>> slow;
  for (int i = 0; i < 20; ++i) slow.push_back(slow_client());
  RawClient poll(port_), kept(port_);
  ASSERT_TRUE(poll.send("GET /api/sweep/alpha?since=" + version +
                        "&wait=25 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  ASSERT_TRUE(kept.send("GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  ASSERT_EQ(status_of(kept.read_answer(10s)), 200);  // then idle, kept alive
  const auto t0 = Clock::now();
  stop();
  EXPECT_LT(Clock::now() - t0, 10s);
  for (auto& client : slow) {
    bool closed = false;
    EXPECT_EQ(client->read_until_closed(10s, &closed), "");
    EXPECT_TRUE(closed);
  }
  EXPECT_EQ(status_of(poll.read_answer(10s)), 304);
  bool kept_closed = false;
  kept.read_until_closed(10s, &kept_closed);
  EXPECT_TRUE(kept_closed);
}

// Item 7: each request read every metric point of the sweep (ten at once doubled the server's
// memory). Ten pages and ten API requests for one version read the store once for each kind and
// are answered from one shared text.
TEST_F(ServeHardening, ConcurrentRequestsForOneVersionReadTheStoreOnce) {
  start();
  std::this_thread::sleep_for(1100ms);  // settled: the version cannot change under the requests
  const std::uint64_t loads = server_->report_loads();
  std::vector<std::future<httplib::Result>> pages, apis;
  for (int i = 0; i < 10; ++i) {
    pages.push_back(std::async(std::launch::async, [&] { return get("/sweep/alpha"); }));
    apis.push_back(std::async(std::launch::async, [&] { return get("/api/sweep/alpha"); }));
  }
  std::string page, api;
  for (auto& p : pages) {
    auto r = p.get();
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    if (page.empty()) page = r->body;
    EXPECT_EQ(r->body, page);
  }
  for (auto& a : apis) {
    auto r = a.get();
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    if (api.empty()) api = r->body;
    EXPECT_EQ(r->body, api);
    EXPECT_EQ(sweep::Json::parse(r->body)["sweep"], "alpha");
  }
  EXPECT_EQ(server_->report_loads() - loads, 2u);

  // A change of the store is read again, once.
  {
    Store store(out_.path() / "alpha" / "sweep.db");
    const std::int64_t trial = sweep::Json::parse(api)["data"]["trials"][0]["id"];
    store.log_metric({.trial_id = trial, .name = "val_accuracy", .step = 999'999, .value = 1});
  }
  auto changed = get("/api/sweep/alpha");
  ASSERT_TRUE(changed);
  EXPECT_NE(changed->body, api);
  EXPECT_EQ(server_->report_loads() - loads, 3u);
}

// A kept-alive connection answers requests sent ahead of their answers, in order, and says how
// long it stays open.
TEST_F(ServeHardening, AKeptAliveConnectionAnswersRequestsSentAhead) {
  start();
  RawClient client(port_);
  ASSERT_TRUE(
      client.send("GET /api/sweeps HTTP/1.1\r\nHost: localhost\r\n\r\n"
                  "GET /nothing HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  const std::string first = client.read_answer(10s), second = client.read_answer(10s);
  EXPECT_EQ(status_of(first), 200);
  EXPECT_NE(first.find("Keep-Alive: timeout=5, max=100"), std::string::npos) << first;
  EXPECT_EQ(status_of(second), 404);
  ASSERT_TRUE(client.send("GET /sweeps HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  EXPECT_EQ(status_of(client.read_answer(10s)), 200);
}

// Issue 42's hostile pass, #18: after a 400 for a request line httplib could not parse, the
// bytes sent after it were read as a new request and answered 200. An answer that ends framing
// trust (400, 414, ...) closes the connection, and says so.
TEST_F(ServeHardening, AnAnswerThatEndsFramingClosesTheConnection) {
  start();
  const std::string next = "GET /api/sweeps HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (const std::string& bad :
       {std::string("get / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        std::string("GET /api/sweeps HTTP/1.1\r\n\r\n")}) {
    RawClient client(port_);
    ASSERT_TRUE(client.send(bad + next));
    bool closed = false;
    const std::string answer = client.read_until_closed(10s, &closed);
    const int status = status_of(answer);
    EXPECT_TRUE(status == 400 || status == 414) << answer.substr(0, 200);
    EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer.substr(0, 400);
    EXPECT_EQ(answer.find("HTTP/1.1 200"), std::string::npos) << answer;
    EXPECT_TRUE(closed);
  }
  auto after = get("/api/sweeps");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
}

}  // namespace
}  // namespace sweep::serve
