// The live page in a real browser while a sweep writes: `sweep run` of a small CPU sweep in the
// background, `sweep serve` on it, and Debian's Chromium (headless, as the report's browser test
// drives it) loading the page twice. The page records its own updates beside its errors in
// <pre id="report-status"> (report_live.js), which --dump-dom hands back: the number of finished
// trials must grow within one page load, without any reload, with no script error and no failed
// poll. Skipped (with the reason) when Chromium is not installed.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "common/json.h"
#include "tests/browser/headless_chromium.h"
#include "tests/serve/serve_test_util.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Child;
using testing::read_file;

// 12 trials of a small MLP on synthetic data, one CPU slot: ~1 s each on one core, so trials
// finish one after another while the browser looks (~12-20 s in all on 2 busy cores).
const char* const kConfig =
    "name: live\n"
    "data: {dataset: synthetic, synthetic: {train_size: 24000, test_size: 300}}\n"
    "model: {preset: mlp, hidden: [64]}\n"
    "training: {epochs: 4, batch_size: 32, learning_rate: 0.01}\n"
    "sweep:\n"
    "  metric: {name: val_accuracy, goal: maximize}\n"
    "  parameters:\n"
    "    training.learning_rate: {values: [0.003, 0.01, 0.03, 0.1]}\n"
    "    training.batch_size: {values: [16, 32, 64]}\n"
    "resources: {execution: cpu, cpu_slots: 1, cpu_threads: 1}\n";
constexpr int kTrials = 12;

class ServeBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = sweep::test::find_chromium();
    if (chromium_.empty()) GTEST_SKIP() << sweep::test::chromium_missing();
    out_ = fs::path(SWEEP_SERVE_TEST_OUTPUT_DIR) / "browser";
    fs::create_directories(out_);
  }

  // Loads `url` in headless Chromium; returns the page's record (report-status), DOM in `dom`.
  sweep::Json load(const std::string& url, const std::string& name, std::string& dom) {
    sweep::test::PageLoad load;
    load.url = url;
    load.profile = temp_.path() / ("profile-" + name);
    load.stdout_path = out_ / (name + ".dom.html");
    load.log_path = temp_.path() / "chromium.log";
    // The budget is virtual time: it runs while no request is pending, so it covers a few
    // polls of 2 s; a held poll's real wait is not counted.
    load.virtual_time_budget_ms = 8000;
    load.timeout_s = 90;
    EXPECT_EQ(sweep::test::run_headless(chromium_, load), 0) << read_file(load.log_path);
    dom = read_file(load.stdout_path);
    std::string problem;
    const sweep::Json status = sweep::test::report_status(dom, problem);
    if (status.is_null()) {
      ADD_FAILURE() << problem;
      return sweep::Json::object();
    }
    return status;
  }

  // updates: the sweep still ran when the page loaded, so the page must have updated itself (a
  // page of a finished sweep has nothing to poll for).
  static void expect_clean(const sweep::Json& status, const std::string& which, bool updates) {
    ASSERT_TRUE(status.contains("live")) << which << ": report_live.js did not run";
    EXPECT_TRUE(status["errors"].empty()) << which << ": " << status["errors"].dump(2);
    EXPECT_EQ(status["done"], true) << which;
    EXPECT_TRUE(status["live"]["failures"].empty()) << which << ": " << status["live"].dump();
    if (updates) {
      EXPECT_GE(status["live"]["updates"].get<int>(), 1) << which << ": " << status["live"].dump();
    }
  }

  // The finished trials the header's state chips show (every state but queued and running).
  static int finished_in_header(const std::string& dom) {
    int finished = 0;
    for (const char* state :
         {"completed", "stopped_early", "diverged", "failed", "cancelled", "interrupted"}) {
      const std::string chip = "<span class=\"chip state-" + std::string(state) + "\">";
      for (auto at = dom.find(chip); at != std::string::npos; at = dom.find(chip, at + 1)) {
        // Only the header's chips: "N completed" (the table's chips say just the state).
        const std::string text = dom.substr(at + chip.size(), 12);
        if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])))
          finished += std::atoi(text.c_str());
      }
    }
    return finished;
  }

  std::string chromium_;
  testing::TempDir temp_;
  fs::path out_;
};

TEST_F(ServeBrowser, TheLivePageCountsFinishedTrialsUpWithoutReloading) {
  const fs::path config = temp_.path() / "live.yaml";
  std::ofstream(config) << kConfig;
  const std::string runs = (temp_.path() / "runs").string();
  Child run({SWEEP_BINARY, "run", config.string(), "--out", runs}, temp_.path() / "run.log");

  // `sweep serve live` needs the database: wait for it (the run creates it first thing).
  const fs::path db = temp_.path() / "runs" / "live" / "sweep.db";
  for (int i = 0; i < 200 && !fs::exists(db); ++i) std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(fs::exists(db)) << read_file(temp_.path() / "run.log");
  const fs::path serve_log = temp_.path() / "serve.log";
  Child serve({SWEEP_BINARY, "serve", "live", "--out", runs, "--port", "0"}, serve_log);
  const int port = testing::served_port(serve_log, 10s);
  ASSERT_GT(port, 0) << read_file(serve_log);
  httplib::Client client("127.0.0.1", port);
  for (int i = 0; i < 100; ++i) {  // the sweep row follows the file by a moment
    auto r = client.Get("/api/sweep/live");
    if (r && r->status == 200) break;
    std::this_thread::sleep_for(50ms);
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";  // → /sweep/live

  std::string dom1, dom2;
  const sweep::Json first = load(url, "first", dom1);
  expect_clean(first, "first load", true);
  const sweep::Json second = load(url, "second", dom2);
  // On two busy cores Chromium once took over a minute to start, and the sweep had ended before
  // the second load (it saw 12 of 12 and, rightly, polled no more).
  const bool ended_before_second = second.contains("live") && second["live"].contains("finished") &&
                                   !second["live"]["finished"].empty() &&
                                   second["live"]["finished"].front() == kTrials;
  expect_clean(second, "second load", !ended_before_second);
  std::cout << "finished trials seen by the first load: " << first["live"]["finished"].dump()
            << ", by the second: " << second["live"]["finished"].dump() << std::endl;

  const auto& seen1 = first["live"]["finished"];
  const auto& seen2 = second["live"]["finished"];
  ASSERT_GE(seen1.size(), 2u);
  ASSERT_GE(seen2.size(), ended_before_second ? 1u : 2u);
  EXPECT_LT(seen1.front().get<int>(), kTrials) << "the sweep ended before the browser looked";
  EXPECT_GT(seen1.back().get<int>(), seen1.front().get<int>())
      << "the page did not update itself while trials finished";
  EXPECT_GE(seen2.front().get<int>(), seen1.back().get<int>());
  EXPECT_GE(seen2.back().get<int>(), seen2.front().get<int>());
  // What the page shows is what it recorded: the header's chips were replaced by the updates.
  EXPECT_EQ(finished_in_header(dom1), seen1.back().get<int>());
  EXPECT_EQ(finished_in_header(dom2), seen2.back().get<int>());
  EXPECT_NE(dom1.find("id=\"live-state\" class=\"live-state live-on\""), std::string::npos);

  const auto run_status = run.wait(60s);
  ASSERT_TRUE(run_status) << "the sweep did not end";
  EXPECT_EQ(*run_status, 0) << read_file(temp_.path() / "run.log");
  auto final_data = client.Get("/api/sweep/live");
  ASSERT_TRUE(final_data);
  const auto json = sweep::Json::parse(final_data->body);
  EXPECT_EQ(json["data"]["trials"].size(), static_cast<std::size_t>(kTrials));

  serve.signal(SIGINT);
  const auto serve_status = serve.wait(10s);
  ASSERT_TRUE(serve_status);
  EXPECT_EQ(*serve_status, 0) << read_file(serve_log);
}

}  // namespace
}  // namespace sweep::serve
