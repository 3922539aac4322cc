// The real `sweep serve`: the URL it prints, Ctrl-C and SIGTERM end it with exit 0, a port in
// use is one message and exit 1, an unknown sweep is exit 1, another host than loopback warns.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>

#include "store/store.h"
#include "sweep/serve/live_server.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"
#include "tests/serve/serve_test_util.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Child;
using testing::read_file;

class ServeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    Store store(out_.path() / "runs" / "demo" / "sweep.db");
    reports::testing::store_sweep(store, reports::testing::make_synthetic_sweep({.name = "demo"}));
  }
  std::string runs() const { return (out_.path() / "runs").string(); }
  fs::path log(const std::string& name) const { return out_.path() / (name + ".log"); }

  testing::TempDir out_;
};

TEST_F(ServeCommand, PrintsItsUrlServesAndStopsCleanlyOnCtrlCAndSigterm) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const fs::path output = log("serve-" + std::to_string(sig));
    Child serve({SWEEP_BINARY, "serve", "demo", "--out", runs(), "--port", "0"}, output);
    const int port = testing::served_port(output, 10s);
    ASSERT_GT(port, 0) << read_file(output);
    EXPECT_NE(read_file(output).find("/sweep/demo"), std::string::npos) << read_file(output);
    httplib::Client client("127.0.0.1", port);
    auto page = client.Get("/sweep/demo");
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    serve.signal(sig);
    const auto status = serve.wait(10s);
    ASSERT_TRUE(status) << "still serving 10 s after signal " << sig;
    EXPECT_EQ(*status, 0) << read_file(output);
    EXPECT_NE(read_file(output).find("sweep serve: stopped"), std::string::npos);
  }
}

TEST_F(ServeCommand, APortInUseIsOneMessageAndExitOne) {
  LiveServer taken({.out_dir = runs(), .port = 0});
  const int port = taken.bind();
  const fs::path output = log("in-use");
  Child serve({SWEEP_BINARY, "serve", "--out", runs(), "--port", std::to_string(port)}, output);
  const auto status = serve.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(*status, 1);
  const std::string text = read_file(output);
  EXPECT_EQ(text,
            "sweep: cannot serve on 127.0.0.1:" + std::to_string(port) +
                ": the port is in use (another sweep serve?); choose another with --port N\n");
}

TEST_F(ServeCommand, AnUnknownSweepOrDirectoryIsExitOneAndCreatesNothing) {
  const fs::path output = log("unknown");
  Child serve({SWEEP_BINARY, "serve", "nope", "--out", runs(), "--port", "0"}, output);
  const auto status = serve.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(*status, 1);
  EXPECT_NE(read_file(output).find("no sweep database at"), std::string::npos) << read_file(output);
  EXPECT_FALSE(fs::exists(out_.path() / "runs" / "nope"));

  const fs::path no_dir = log("no-dir");
  Child serve_dir(
      {SWEEP_BINARY, "serve", "--out", (out_.path() / "missing").string(), "--port", "0"}, no_dir);
  const auto dir_status = serve_dir.wait(10s);
  ASSERT_TRUE(dir_status);
  EXPECT_EQ(*dir_status, 1);
  EXPECT_NE(read_file(no_dir).find("no directory"), std::string::npos) << read_file(no_dir);
  EXPECT_FALSE(fs::exists(out_.path() / "missing"));
}

TEST_F(ServeCommand, AnotherHostThanLoopbackIsOnlyOnRequestAndWarns) {
  const fs::path output = log("any-host");
  Child serve({SWEEP_BINARY, "serve", "--out", runs(), "--port", "0", "--host", "0.0.0.0"}, output);
  ASSERT_GT(testing::served_port(output, 10s), 0) << read_file(output);
  EXPECT_NE(read_file(output).find("warning: listening on 0.0.0.0: every sweep in"),
            std::string::npos)
      << read_file(output);
  serve.signal(SIGTERM);
  const auto status = serve.wait(10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(*status, 0);
}

}  // namespace
}  // namespace sweep::serve
