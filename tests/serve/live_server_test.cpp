// The server in-process on a free port, asked with httplib::Client: the list, a report page, the
// JSON API, 404 for unknown names, traversal refused, plain messages for bad requests, the JSON
// valid while another thread writes, long polls answered by a write, port in use, stop().
#include "sweep/serve/live_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <utility>

#include "common/check.h"
#include "common/json.h"
#include "store/store.h"
#include "sweep/serve/sweep_catalog.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"
#include "tests/serve/serve_test_util.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Nothing a bad request gets back may show where in our code it failed.
void expect_no_internals(const std::string& body) {
  for (const char* leak : {".cpp", ".h:", "what()", "terminate", "std::", "sweep::"})
    EXPECT_EQ(body.find(leak), std::string::npos) << "'" << leak << "' in:\n" << body;
}

class LiveServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"alpha", "beta"}) {
      Store store(db(name));
      reports::testing::store_sweep(store, reports::testing::make_synthetic_sweep({.name = name}));
    }
  }
  void TearDown() override { stop(); }

  fs::path db(const std::string& name) const { return out_.path() / name / "sweep.db"; }

  void start(ServeOptions options = {}) {
    options.out_dir = out_.path();
    options.port = 0;
    server_ = std::make_unique<LiveServer>(options);
    port_ = server_->bind();
    serving_ = std::thread([this] { server_->serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(30, 0);
  }
  void stop() {
    if (!server_) return;
    server_->stop();
    serving_.join();
    server_.reset();
  }
  httplib::Result get(const std::string& path, const httplib::Headers& headers = {}) {
    return client_->Get(path.c_str(), headers);
  }

  testing::TempDir out_;
  std::unique_ptr<LiveServer> server_;
  std::thread serving_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(LiveServerTest, ListsTheSweepsAsAPageAndAsJson) {
  start();
  auto page = get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("href=\"/sweep/alpha\""), std::string::npos);
  EXPECT_NE(page->body.find("href=\"/sweep/beta\""), std::string::npos);
  EXPECT_NE(page->body.find("action=\"/compare\""), std::string::npos);
  EXPECT_EQ(page->get_header_value("Cache-Control"), "no-store");

  auto list = get("/api/sweeps");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200);
  const auto json = sweep::Json::parse(list->body);
  ASSERT_EQ(json["sweeps"].size(), 2u);
  EXPECT_EQ(json["sweeps"][0]["name"], "alpha");
  EXPECT_GT(json["sweeps"][0]["trials"].get<int>(), 0);
  EXPECT_TRUE(json["sweeps"][0]["best"].is_number());
}

TEST_F(LiveServerTest, TheReportPageIsTheLiveReport) {
  start();
  auto page = get("/sweep/alpha");
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("id=\"sweep-name\">alpha<"), std::string::npos);
  EXPECT_NE(page->body.find("id=\"report-live\""), std::string::npos);
  EXPECT_NE(page->body.find("\"url\":\"/api/sweep/alpha\""), std::string::npos);
  EXPECT_NE(page->body.find("id=\"live-state\""), std::string::npos);
  // HEAD is answered like GET, without the body.
  auto head = client_->Head("/sweep/alpha");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

TEST_F(LiveServerTest, UnknownNamesAre404AndCreateNothing) {
  start();
  auto page = get("/sweep/nope");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 404);
  EXPECT_NE(page->body.find("no sweep named &#39;nope&#39;"), std::string::npos) << page->body;
  auto api = get("/api/sweep/nope");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 404);
  EXPECT_TRUE(sweep::Json::parse(api->body).contains("error"));
  auto compare = get("/compare?a=alpha&b=nope");
  ASSERT_TRUE(compare);
  EXPECT_EQ(compare->status, 404);
  EXPECT_FALSE(fs::exists(out_.path() / "nope"));
  EXPECT_EQ(sweep_names(out_.path()).size(), 2u);
}

TEST_F(LiveServerTest, PathTraversalIsRefused) {
  // A sweep.db outside OUT that a traversal would reach.
  Store outside(out_.path().parent_path() / (out_.path().filename().string() + "-x") / "sweep.db");
  start();
  const std::string sibling = out_.path().filename().string() + "-x";
  const std::vector<std::string> paths = {"/sweep/../../etc/passwd",
                                          "/sweep/..%2F..%2Fetc%2Fpasswd",
                                          "/sweep/%2e%2e",
                                          "/api/sweep/..%2F" + sibling,
                                          "/api/sweep/..",
                                          "/sweep/alpha%2F..%2Fbeta",
                                          "/sweep/%00",
                                          "/compare?a=..&b=alpha",
                                          "/compare?a=../" + sibling + "&b=alpha"};
  for (const std::string& path : paths) {
    auto r = get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_TRUE(r->status == 404 || r->status == 400) << path << " → " << r->status;
    EXPECT_EQ(r->body.find("root:"), std::string::npos) << path;
    expect_no_internals(r->body);
  }
  fs::remove_all(out_.path().parent_path() / sibling);
}

TEST_F(LiveServerTest, BadRequestsGetAStatusAndOneSentence) {
  start();
  auto wait = get("/api/sweep/alpha?wait=forever");
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->status, 400);
  EXPECT_EQ(sweep::Json::parse(wait->body)["error"],
            "wait must be a whole number of seconds from 0 to 25, not 'forever'");
  auto too_long = get("/api/sweep/alpha?wait=1000000000000");
  ASSERT_TRUE(too_long);
  EXPECT_EQ(too_long->status, 400);
  auto post = client_->Post("/sweeps", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_NE(post->body.find("read-only"), std::string::npos);
  auto del = client_->Delete("/sweep/alpha");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  EXPECT_TRUE(fs::exists(db("alpha")));
  auto rebinding = get("/", {{"Host", "attacker.example:8787"}});
  ASSERT_TRUE(rebinding);
  EXPECT_EQ(rebinding->status, 403);
  auto missing = get("/compare?a=alpha");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  auto nothing = get("/no/such/page");
  ASSERT_TRUE(nothing);
  EXPECT_EQ(nothing->status, 404);
  for (const auto* r : {&wait, &too_long, &post, &rebinding, &missing, &nothing})
    expect_no_internals((*r)->body);

  // A file that is not a sweep store: a 500 with the store's message for users, no internals.
  fs::create_directories(out_.path() / "junk");
  { std::ofstream(out_.path() / "junk" / "sweep.db") << "not a database at all, just text\n"; }
  auto junk = get("/sweep/junk");
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->status, 500);
  EXPECT_NE(junk->body.find("is not a SQLite database"), std::string::npos) << junk->body;
  expect_no_internals(junk->body);
  auto list = get("/sweeps");  // the list still shows the others, and the junk's reason
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  EXPECT_NE(list->body.find("href=\"/sweep/alpha\""), std::string::npos);
}

TEST_F(LiveServerTest, JsonStaysValidWhileAnotherThreadWritesAndTheWriterIsNeverBlocked) {
  start();
  const auto first = sweep::Json::parse(get("/api/sweep/alpha")->body);
  const std::size_t trials = first["data"]["trials"].size();
  ASSERT_GT(trials, 0u);
  std::int64_t trial_id = first["data"]["trials"][0]["id"];

  std::atomic<bool> done{false};
  std::atomic<int> writes{0};
  std::chrono::steady_clock::duration slowest{};
  std::thread writer([&] {
    Store store(db("alpha"));
    for (std::int64_t step = 1'000'000; !done; ++step) {
      const auto t0 = Clock::now();
      store.log_metric({.trial_id = trial_id, .name = "val_accuracy", .step = step, .value = 0.5});
      slowest = std::max(slowest, Clock::now() - t0);
      ++writes;
    }
  });
  // At least 15 requests, and on until the writer has written 16 times: an answer from the
  // render cache is quick, and the reads must overlap the writes.
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (int i = 0; i < 15 || (writes <= 15 && Clock::now() < deadline); ++i) {
    auto r = get("/api/sweep/alpha");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    sweep::Json json;
    ASSERT_NO_THROW(json = sweep::Json::parse(r->body)) << r->body.substr(0, 200);
    EXPECT_EQ(json["sweep"], "alpha");
    EXPECT_EQ(json["data"]["trials"].size(), trials);
    EXPECT_TRUE(json["summary"]["header"].get<std::string>().find("sweep-name") !=
                std::string::npos);
    EXPECT_FALSE(json["version"].get<std::string>().empty());
  }
  done = true;
  writer.join();
  EXPECT_GT(writes.load(), 15);
  EXPECT_LT(slowest, std::chrono::milliseconds(500)) << "the writer waited on the readers";
}

TEST_F(LiveServerTest, APollIsHeldUntilTheStoreChanges) {
  start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // let the files settle
  const auto first = sweep::Json::parse(get("/api/sweep/beta")->body);
  const std::string version = first["version"];
  ASSERT_EQ(version.find('+'), std::string::npos) << "settled: " << version;

  auto unchanged = get("/api/sweep/beta", {{"If-None-Match", "\"" + version + "\""}});
  ASSERT_TRUE(unchanged);
  EXPECT_EQ(unchanged->status, 304);
  EXPECT_TRUE(unchanged->body.empty());

  auto t0 = Clock::now();
  auto quiet = get("/api/sweep/beta?since=" + version + "&wait=1");
  ASSERT_TRUE(quiet);
  EXPECT_EQ(quiet->status, 304);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(900));

  // A write during a held poll answers it, well before its 20 s.
  httplib::Client other("127.0.0.1", port_);
  other.set_read_timeout(30, 0);
  t0 = Clock::now();
  auto held = std::async(std::launch::async, [&] {
    return other.Get(("/api/sweep/beta?since=" + version + "&wait=20").c_str());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  {
    Store store(db("beta"));
    const std::int64_t trial_id = first["data"]["trials"][0]["id"];
    store.log_metric({.trial_id = trial_id, .name = "val_accuracy", .step = 999'999, .value = 1});
  }
  auto answer = held.get();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_NE(sweep::Json::parse(answer->body)["version"], version);
}

// Held polls never take every thread: past max_held_polls a poll is answered at once, and the
// rest of the server answers meanwhile (33 open pages once left a 64th request 30 s waiting).
TEST_F(LiveServerTest, HeldPollsBeyondTheLimitAreAnsweredAtOnce) {
  start({.max_held_polls = 2});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string version = sweep::Json::parse(get("/api/sweep/alpha")->body)["version"];
  const auto poll = [&] {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30, 0);
    const auto t0 = Clock::now();
    auto r = c.Get(("/api/sweep/alpha?since=" + version + "&wait=20").c_str());
    return std::pair{r ? r->status : 0, Clock::now() - t0};
  };
  auto first = std::async(std::launch::async, poll), second = std::async(std::launch::async, poll);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto [status, took] = poll();  // the third: not held 20 s
  EXPECT_EQ(status, 304);
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(first.wait_for(std::chrono::seconds(0)), std::future_status::timeout);  // still held
  stop();
  EXPECT_EQ(first.get().first, 304);
  EXPECT_EQ(second.get().first, 304);
}

TEST_F(LiveServerTest, StopAnswersHeldPollsAtOnce) {
  start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const std::string version = sweep::Json::parse(get("/api/sweep/alpha")->body)["version"];
  auto held = std::async(std::launch::async, [&] {
    return client_->Get(("/api/sweep/alpha?since=" + version + "&wait=25").c_str());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  stop();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  auto answer = held.get();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 304);
}

TEST_F(LiveServerTest, ASweepGivenOnTheCommandLineIsTheHomePage) {
  start({.home_sweep = "beta"});
  auto home = get("/");
  ASSERT_TRUE(home);
  EXPECT_EQ(home->status, 302);
  EXPECT_EQ(home->get_header_value("Location"), "/sweep/beta");
  auto list = get("/sweeps");
  ASSERT_TRUE(list);
  EXPECT_EQ(list->status, 200);
  auto compare = get("/compare?a=alpha&b=beta");
  ASSERT_TRUE(compare);
  EXPECT_EQ(compare->status, 200);
  EXPECT_NE(compare->body.find("<iframe src=\"/sweep/alpha\""), std::string::npos);
  EXPECT_NE(compare->body.find("<iframe src=\"/sweep/beta\""), std::string::npos);
}

TEST_F(LiveServerTest, APortInUseIsAnErrorNotASharedPort) {
  start();
  LiveServer second({.out_dir = out_.path(), .port = port_});
  try {
    second.bind();
    FAIL() << "bound a port in use";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the port is in use"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sweep::serve
