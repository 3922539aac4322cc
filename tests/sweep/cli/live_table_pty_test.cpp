// `sweep run` on a real terminal: the binary runs on a pseudo-terminal of 80, 100 and 200
// columns (and one that narrows from 200 to 80 while it runs: the child gets SIGWINCH), and what
// it writes goes through a VT100 screen (vt_screen.h), as a terminal would show it. A random
// search with ASHA draws 17-digit learning rates; the live table must never let a line wrap,
// must show one table (one header) at a time, must never write those values in full, and must
// leave the summary on the screen at the end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "tests/sweep/long_number.h"
#include "tests/sweep/sweep_process_util.h"
#include "tests/sweep/vt_screen.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using sweep::testing::fresh_dir;
using sweep::testing::long_number;

// Six trials, two at a time on the CPU (a few seconds at most; more images, longer): the table is
// redrawn many times. Three parameters with dotted names; the learning
// rate log-uniform.
fs::path write_config(const fs::path& dir, int train_size = 3000) {
  const fs::path config = dir / "live.yaml";
  std::ofstream(config)
      << "name: live\n"
         "data: {dataset: synthetic, synthetic: {train_size: "
      << train_size
      << ", test_size: 500}}\n"
         "model: {preset: mlp, hidden: [256, 256]}\n"
         "training: {batch_size: 32, epochs: 4, log_every: 4, seed: 1}\n"
         "sweep:\n"
         "  method: random\n"
         "  max_trials: 6\n"
         "  seed: 7\n"
         "  metric: {name: val_loss, goal: minimize}\n"
         "  parameters:\n"
         "    training.learning_rate: {distribution: log_uniform_values, min: 0.001, max: 0.1}\n"
         "    training.momentum: {distribution: uniform, min: 0.8, max: 0.99}\n"
         "    training.batch_size: {values: [16, 32]}\n"
         "  early_terminate: {type: asha, min_epochs: 1, eta: 2}\n"
         "resources: {cpu_slots: 2, cpu_threads: 1}\n"
         "output: {dir: "
      << (dir / "runs").string() << "}\n";
  return config;
}

struct Window {
  int rows, columns;
};
void PrintTo(const Window& window, std::ostream* out) {
  *out << window.columns << "x" << window.rows;
}

struct PtyRun {
  int exit_code = -1;
  std::string bytes;           // everything the child wrote
  std::size_t resized_at = 0;  // bytes.size() when the window narrowed (0: it did not)
  // ... and 0.5 s later (two redraws at least): frames from here are drawn at the new size.
  std::size_t settled_at = 0;
  bool resized_while_running = false;
};

// Runs `sweep run CONFIG` on a new pseudo-terminal of `start` size, feeding its output to
// `screen`. With `narrow_to`, the window narrows once the table has been on screen for 0.5 s.
// While the new size settles (bytes the child wrote before it read the new size), the screen's
// last-column count is set back to what it was.
PtyRun run_on_pty(const fs::path& config, Window start, sweep::tty_test::VtScreen& screen,
                  std::optional<Window> narrow_to = std::nullopt) {
  PtyRun run;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    ADD_FAILURE() << "no pseudo-terminal: " << std::strerror(errno);
    return run;
  }
  const std::string slave_name = ::ptsname(master);
  winsize size{};
  size.ws_row = static_cast<unsigned short>(start.rows);
  size.ws_col = static_cast<unsigned short>(start.columns);
  ::ioctl(master, TIOCSWINSZ, &size);

  // Everything the child needs is made before fork: after it, only async-signal-safe calls.
  std::vector<std::string> args = {SWEEP_BINARY, "run", config.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = {"TERM=xterm"};
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    // The size must come from the terminal, not from the environment.
    if (entry.rfind("COLUMNS=", 0) == 0 || entry.rfind("LINES=", 0) == 0 ||
        entry.rfind("TERM=", 0) == 0)
      continue;
    env_text.emplace_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    const int slave = ::open(slave_name.c_str(), O_RDWR);
    if (slave < 0) ::_exit(126);
    ::ioctl(slave, TIOCSCTTY, 0);
    ::dup2(slave, STDIN_FILENO);
    ::dup2(slave, STDOUT_FILENO);
    ::dup2(slave, STDERR_FILENO);
    if (slave > STDERR_FILENO) ::close(slave);
    ::close(master);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  const auto started = Clock::now();
  std::optional<Clock::time_point> table_seen, resized;
  int counted_before_resize = 0;
  bool exited = false;
  int status = 0;
  char buffer[4096];
  while (Clock::now() - started < std::chrono::seconds(90)) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) {
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n <= 0) break;  // EIO: the child and every copy of the terminal are gone
      run.bytes.append(buffer, static_cast<std::size_t>(n));
      screen.feed(std::string_view(buffer, static_cast<std::size_t>(n)));
    } else if (exited) {
      break;
    }
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    if (!table_seen && run.bytes.find(" | elapsed ") != std::string::npos)
      table_seen = Clock::now();
    if (narrow_to && table_seen && !resized &&
        Clock::now() - *table_seen > std::chrono::milliseconds(500)) {
      winsize narrow{};
      narrow.ws_row = static_cast<unsigned short>(narrow_to->rows);
      narrow.ws_col = static_cast<unsigned short>(narrow_to->columns);
      ::ioctl(master, TIOCSWINSZ, &narrow);  // the kernel sends the child SIGWINCH
      screen.resize(narrow_to->rows, narrow_to->columns);
      resized = Clock::now();
      run.resized_at = run.bytes.size();
      run.resized_while_running = !exited;
      counted_before_resize = screen.last_column_writes;
    }
    if (resized && run.settled_at == 0) {
      screen.last_column_writes = counted_before_resize;
      if (Clock::now() - *resized > std::chrono::milliseconds(500))
        run.settled_at = run.bytes.size();
    }
  }
  // The terminal closed (EIO) as the child exits; give it a moment to be reaped.
  const auto closed = Clock::now();
  while (!exited && Clock::now() - closed < std::chrono::seconds(10)) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!exited) ::usleep(10000);
  }
  if (!exited) {
    ADD_FAILURE() << "sweep run did not end";
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ::close(master);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// What every run must show, whatever the width.
void expect_a_clean_table(const PtyRun& run, const sweep::tty_test::VtScreen& screen, int columns) {
  EXPECT_EQ(run.exit_code, 0) << screen.text();
  EXPECT_EQ(screen.last_column_writes, 0)
      << "a line reached the last column of " << columns << " (the terminal wraps it):\n"
      << screen.last_column_rows.back();
  EXPECT_TRUE(screen.unknown.empty()) << screen.unknown.front();

  // The live part ends with the last erase (the table removed before the summary).
  const std::size_t last_erase = run.bytes.rfind("\x1b[J");
  ASSERT_NE(last_erase, std::string::npos) << "no table was drawn:\n" << run.bytes;
  const std::string live_part = run.bytes.substr(0, last_erase);
  const auto full = long_number(live_part);
  EXPECT_FALSE(full) << "the live output wrote " << *full << " in full";
  EXPECT_NE(live_part.find("learning_rate"), std::string::npos);

  // Between redraws the screen holds one table: one header, one best line.
  ASSERT_GE(screen.before_erase.size(), 5u);
  std::size_t tables_with_running = 0;
  for (const auto& seen : screen.before_erase) {
    std::size_t headers = 0, bests = 0, running = 0;
    std::string text;
    for (const std::string& line : seen) {
      headers += line.rfind("sweep live: 6 trials", 0) == 0;
      bests += line.rfind("best: ", 0) == 0;
      running += line.rfind("running  ", 0) == 0 && line.find("  epoch  ") != std::string::npos;
      text += line + "\n";
    }
    EXPECT_LE(headers, 1u) << text;
    EXPECT_LE(bests, 1u) << text;
    tables_with_running += headers == 1 && running == 1;
  }
  EXPECT_GT(tables_with_running, 0u);
  // The last table before the summary.
  std::string last_table;
  for (const std::string& line : screen.before_erase.back()) last_table += line + "\n";
  EXPECT_NE(last_table.find("sweep live: 6 trials | "), std::string::npos) << last_table;

  // The summary, on the final screen.
  const std::string final_screen = screen.text();
  EXPECT_NE(final_screen.find("sweep live: "), std::string::npos) << final_screen;
  EXPECT_NE(final_screen.find("best: trial "), std::string::npos) << final_screen;
  EXPECT_NE(final_screen.find("database: "), std::string::npos) << final_screen;
  EXPECT_EQ(final_screen.find(" | elapsed "), std::string::npos) << final_screen;
}

class LiveTableOnPty : public ::testing::TestWithParam<Window> {};

TEST_P(LiveTableOnPty, NeverWrapsAndShowsOneTable) {
  const Window window = GetParam();
  const fs::path dir = fresh_dir("sweep_live_pty_" + std::to_string(window.columns));
  const fs::path config = write_config(dir);
  sweep::tty_test::VtScreen screen(window.rows, window.columns);
  const PtyRun run = run_on_pty(config, window, screen);
  expect_a_clean_table(run, screen, window.columns);
  fs::remove_all(dir);
}

std::string columns_name(const ::testing::TestParamInfo<Window>& param) {
  return std::to_string(param.param.columns);
}

// 80 x 16 also makes the table give up rows (the finished trials first).
INSTANTIATE_TEST_SUITE_P(Widths, LiveTableOnPty, ::testing::Values(Window{16, 80}, Window{30, 100}),
                         columns_name);

// The window narrows 0.5 s after the table appears, and the new size counts as settled 0.5 s
// later: the sweep must run on for that long. With 3,000 images it ended first once the trainer
// had become fast enough (1.0 s in all): 15,000.
TEST(LiveTableOnResizedPty, NarrowingFrom200To80WhileRunning) {
  const fs::path dir = fresh_dir("sweep_live_pty_resize");
  const fs::path config = write_config(dir, 15000);
  sweep::tty_test::VtScreen screen(40, 200);
  const PtyRun run = run_on_pty(config, {40, 200}, screen, Window{24, 80});
  ASSERT_TRUE(run.resized_while_running) << "the sweep ended before the window narrowed";
  ASSERT_GT(run.settled_at, 0u) << "the sweep ended before the new size settled";
  expect_a_clean_table(run, screen, 80);
  // Tables were drawn at both sizes: at 200 columns the header is one line.
  const std::string before = run.bytes.substr(0, run.resized_at);
  const std::string after = run.bytes.substr(run.settled_at);
  EXPECT_TRUE(std::regex_search(before, std::regex("sweep live: 6 trials \\| [0-9]+ running")))
      << before;
  EXPECT_TRUE(std::regex_search(after, std::regex("sweep live: 6 trials \\| ")))
      << "no table drawn at 80 columns after the resize:\n"
      << after;
  fs::remove_all(dir);
}

}  // namespace
