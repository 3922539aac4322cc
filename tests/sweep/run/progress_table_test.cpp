// The live table of `sweep run` as text: its layout at 80, 100 and 200 columns and in few rows
// (progress_table), the console that draws it in place (ConsoleProgress, live and piped), and the
// helpers under them: terminal columns (terminal_text), digits that tell values apart
// (common/format.h), the terminal's size (terminal_size).
#include "sweep/run/progress_table.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "common/format.h"
#include "sweep/run/console_progress.h"
#include "sweep/run/terminal_size.h"
#include "sweep/run/terminal_text.h"
#include "tests/sweep/long_number.h"
#include "tests/sweep/vt_screen.h"

namespace sweep::run {
namespace {

TEST(DistinguishingDigits, FewestThatTellTheValuesApart) {
  EXPECT_EQ(distinguishing_digits({0.0031622776601683794, 0.0457}), 3);
  EXPECT_EQ(significant(0.0031622776601683794, 3), "0.00316");
  EXPECT_EQ(distinguishing_digits({0.0031622, 0.0031628}), 4);
  EXPECT_EQ(distinguishing_digits({0.12345, 0.12346}), 5);
  // Equal values, one value, none: the minimum.
  EXPECT_EQ(distinguishing_digits({0.5, 0.5}), 3);
  EXPECT_EQ(distinguishing_digits({}), 3);
  EXPECT_EQ(distinguishing_digits({std::nan(""), std::nan("")}), 3);
  // Values that differ only beyond the maximum stay alike at it.
  EXPECT_EQ(distinguishing_digits({1.0, 1.0 + 1e-12}), 6);
  EXPECT_EQ(distinguishing_digits({1.0, 1.0 + 1e-12}, 2, 4), 4);
}

TEST(ParamsText, DigitsPerParameterAndLabels) {
  const Json params = {{"training.learning_rate", 0.0031622776601683794},
                       {"training.batch_size", 64},
                       {"model.name", "mlp"}};
  EXPECT_EQ(params_text(params, ParamNames::last_parts, {{"training.learning_rate", 3}}),
            "learning_rate=0.00316 batch_size=64 name=mlp");
  EXPECT_EQ(params_text(params, ParamNames::last_parts),
            "learning_rate=0.0031622776601683794 batch_size=64 name=mlp");
  EXPECT_EQ(param_labels({"a.lr", "b.lr", "a.bs"}, ParamNames::last_parts),
            (std::vector<std::string>{"a.lr", "b.lr", "a.bs"}));
  EXPECT_EQ(param_digits({"x", "n"}, {}).size(), 0u);
  const Json a = {{"x", 0.12341}, {"n", 3}}, b = {{"x", 0.12349}, {"n", 4}};
  const ParamDigits digits = param_digits({"x", "n"}, {&a, &b});
  EXPECT_EQ(digits.at("x"), 4);
  EXPECT_EQ(digits.count("n"), 0u);  // whole numbers are written whole
}

TEST(TerminalText, FitPadAndWrapCountColumnsNotBytes) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("α→β"), 3u);
  EXPECT_EQ(fit("learning_rate=0.0031622776601683794", 20), "learning_rate=0.0...");
  EXPECT_EQ(fit("short", 20), "short");
  EXPECT_EQ(fit("ααααα", 4), "α...");
  EXPECT_EQ(display_width(fit("ααααααα", 5)), 5u);
  EXPECT_EQ(fit("abcdef", 2), "ab");
  EXPECT_EQ(pad("7", 3, true), "  7");
  EXPECT_EQ(pad("αβ", 4), "αβ  ");
  EXPECT_EQ(wrap_words("trial 3 failed: out of memory", 16),
            (std::vector<std::string>{"trial 3 failed:", "  out of memory"}));
  EXPECT_EQ(wrap_words("", 10), (std::vector<std::string>{""}));
  // A word longer than a line is cut, never left to the terminal.
  for (const std::string& line : wrap_words("see /a/very/long/path/that/does/not/fit here", 12))
    EXPECT_LE(display_width(line), 12u) << line;
  // Two spaces within a line stay two.
  EXPECT_EQ(wrap_words("continue with  sweep resume x", 80),
            (std::vector<std::string>{"continue with  sweep resume x"}));
}

// Sets an environment variable for a scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }
  void set(const char* value) {
    if (value)
      ::setenv(name_, value, 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(TerminalSize, EnvironmentWhenNotATerminal) {
  // A pipe has no window size: COLUMNS and LINES, else 80 x 24.
  ScopedEnv columns("COLUMNS", "132"), lines("LINES", "40");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  TerminalSize size = terminal_size(fds[1]);
  EXPECT_EQ(size.columns, 132);
  EXPECT_EQ(size.rows, 40);
  columns.set("wide");
  lines.set(nullptr);
  size = terminal_size(fds[1]);
  EXPECT_EQ(size.columns, 80);
  EXPECT_EQ(size.rows, 24);
  ::close(fds[0]);
  ::close(fds[1]);
}

// A random search's view: 17-digit learning rates, ASHA stops, more running than fit in a small
// window.
ProgressView random_search_view(int running) {
  ProgressView view;
  view.sweep_name = "random-asha";
  view.metric_name = "val_accuracy";
  view.param_keys = {"training.learning_rate", "training.momentum", "training.batch_size"};
  view.elapsed_seconds = 83;
  auto params = [](int i) {
    return Json{{"training.learning_rate", 0.0031622776601683794 * (1 + i * 0.37)},
                {"training.momentum", 0.81234567891 + i * 0.0123456789},
                {"training.batch_size", 32 << (i % 3)}};
  };
  for (int i = 0; i < running; ++i) {
    RunningTrial t;
    t.number = 10 + i;
    t.device = "cpu:" + std::to_string(i);
    t.epoch = i % 4;
    t.loss = 0.51234567 + i;
    t.metric = i == 0 ? kNotReported : 0.8712345;
    t.fraction = 0.1 * (i % 10);
    t.seconds = 12.5;
    t.params = params(i);
    view.running.push_back(t);
  }
  for (int i = 0; i < 7; ++i) {
    FinishedTrial t;
    t.number = i;
    t.state = i % 2 ? TrialState::stopped_early : TrialState::completed;
    t.metric = 0.8 + i * 0.001;
    t.seconds = 30;
    t.params = params(20 + i);
    view.finished.push_back(t);
  }
  view.best = BestSoFar{4, 0.8712345, params(24)};
  view.states = {{TrialState::running, running},
                 {TrialState::completed, 4},
                 {TrialState::stopped_early, 3},
                 {TrialState::failed, 0},
                 {TrialState::queued, 5}};
  view.trials = static_cast<std::size_t>(running) + 12;
  return view;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

TEST(ProgressTable, EveryLineFitsAt80_100And200Columns) {
  for (const int columns : {40, 80, 100, 200}) {
    SCOPED_TRACE("columns " + std::to_string(columns));
    const std::vector<std::string> lines =
        progress_table(random_search_view(3), TerminalSize{columns, 50});
    const std::string text = joined(lines);
    for (const std::string& line : lines)
      EXPECT_LT(display_width(line), static_cast<std::size_t>(columns)) << line;
    EXPECT_FALSE(testing::long_number(text).has_value()) << text;
    if (columns < 80) continue;  // 40: cut, but never wrapped
    EXPECT_NE(text.find("best: trial 4, val_accuracy 0.8712"), std::string::npos) << text;
    EXPECT_NE(text.find("elapsed 1m23s"), std::string::npos) << text;
    EXPECT_NE(text.find("3 running, 4 completed, 3 stopped_early, 5 queued"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("0 failed"), std::string::npos) << text;  // states with none are left out
  }
  // Wide: one header line, every column whole, and the learning rates with 3 digits (the values
  // of that column differ in the third).
  const std::string wide = joined(progress_table(random_search_view(3), TerminalSize{200, 50}));
  EXPECT_EQ(wide.find("sweep random-asha: 15 trials | 3 running"), 0u) << wide;
  for (const char* cell : {"learning_rate", "momentum", "batch_size", "0.00316", "0.00433", "64",
                           "[####", "1m53s", "stopped_early", "val_accuracy"})
    EXPECT_NE(wide.find(cell), std::string::npos) << cell << "\n" << wide;
  // Narrow: the header in two lines, each whole.
  const std::vector<std::string> narrow =
      progress_table(random_search_view(3), TerminalSize{80, 50});
  EXPECT_EQ(narrow[0], "sweep random-asha: 15 trials | elapsed 1m23s");
  EXPECT_EQ(narrow[1], "3 running, 4 completed, 3 stopped_early, 5 queued");
}

TEST(ProgressTable, FitsTheRowsAndSaysWhatItLeftOut) {
  // 12 rows: header, best, running header, 6 running, "... and 6 more running" (10 = 12 - 2).
  const std::vector<std::string> lines =
      progress_table(random_search_view(12), TerminalSize{200, 12});
  ASSERT_EQ(lines.size(), 10u) << joined(lines);
  EXPECT_EQ(lines.back(), "... and 6 more running");
  EXPECT_EQ(joined(lines).find("finished"), std::string::npos);
  // Room to spare: every running trial, then the last finished ones, newest at the bottom.
  const std::vector<std::string> roomy =
      progress_table(random_search_view(2), TerminalSize{200, 10});
  ASSERT_EQ(roomy.size(), 8u) << joined(roomy);
  EXPECT_EQ(roomy[5].rfind("finished", 0), 0u) << joined(roomy);
  EXPECT_EQ(roomy[7].find("       6  completed"), 0u) << joined(roomy);
  // Tiny windows still never get more lines than rows - 2, nor a line as wide as the window.
  for (const int rows : {1, 2, 3, 4, 5})
    for (const int columns : {1, 2, 5, 20}) {
      const auto tiny = progress_table(random_search_view(4), TerminalSize{columns, rows});
      EXPECT_LE(tiny.size(), static_cast<std::size_t>(std::max(rows - 2, 1)));
      for (const std::string& line : tiny)
        EXPECT_LT(display_width(line), static_cast<std::size_t>(columns)) << line;
    }
}

TEST(ProgressTable, DigitsFollowTheTrialsShown) {
  ProgressView view;
  view.sweep_name = "s";
  view.metric_name = "val_loss";
  view.param_keys = {"lr"};
  for (const double lr : {0.001234501, 0.001234509}) {
    RunningTrial t;
    t.number = static_cast<std::int64_t>(view.running.size());
    t.device = "cpu:0";
    t.params = Json{{"lr", lr}};
    view.running.push_back(t);
  }
  view.states[TrialState::running] = 2;
  view.trials = 2;
  const std::string text = joined(progress_table(view, TerminalSize{100, 20}));
  // At 5 digits both read 0.0012345; at 6 they differ.
  EXPECT_NE(text.find("  0.0012345\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  0.00123451\n"), std::string::npos) << text;
  EXPECT_NE(text.find("best: no trial has reported val_loss yet"), std::string::npos) << text;
}

scheduler::TrialSpec spec(std::int64_t id, double lr) {
  scheduler::TrialSpec s;
  s.id = id;
  s.number = id;
  s.params = Json{{"training.learning_rate", lr}};
  s.name = params_text(s.params, ParamNames::last_parts);
  return s;
}

scheduler::MetricPoint point(const std::string& name, double value, std::int64_t epoch) {
  scheduler::MetricPoint p;
  p.name = name;
  p.value = value;
  p.epoch = epoch;
  return p;
}

ConsoleSetup setup_for(bool live, const TerminalSize* size) {
  ConsoleSetup setup;
  setup.live = live;
  setup.sweep_name = "lr";
  setup.metric_name = "val_loss";
  setup.to_run = 3;
  setup.param_keys = {"training.learning_rate"};
  setup.terminal_size = [size] { return *size; };
  return setup;
}

// Trial events drawn live on a 60-column screen that narrows to 40: every redraw goes back over
// exactly the table drawn before (one table on screen, lines above it kept), no line reaches the
// last column, and the numbers are short.
void live_redraw_replaces_the_table(tty_test::OnResize on_resize) {
  std::ostringstream out;
  TerminalSize size{60, 24};
  tty_test::VtScreen screen(size.rows, size.columns, on_resize);
  ConsoleProgress console(out, setup_for(true, &size));
  auto drawn = [&] {
    screen.feed_written(out.str());
    out.str("");
  };
  const std::vector<scheduler::Device> cpu = {scheduler::Device::cpu()};
  const auto t0 = spec(0, 0.0031622776601683794), t1 = spec(1, 0.0457), t2 = spec(2, 0.0458);
  console.note(
      "running lr: 3 trials on cpu x2 slots (1 thread each), early stopping: ASHA (a long "
      "description of the rule that does not fit in sixty columns)");
  console.on_started(t0, cpu);
  console.on_started(t1, cpu);
  console.on_metric(t0, point("val_loss", 0.61, 1));
  console.redraw();
  drawn();
  console.on_finished(
      t0, {TrialState::stopped_early, "ASHA: not in the top third\nsecond line", {}}, cpu[0]);
  console.on_started(t2, cpu);
  console.on_metric(t1, point("val_loss", 0.52, 1));
  console.redraw();
  drawn();
  const std::string at_60 = screen.text();
  size = {40, 24};
  screen.resize(size.rows, size.columns);
  console.redraw();
  console.on_progress(t1, 0.5, "epoch 1/2");
  console.redraw();
  drawn();
  const std::string last_table = screen.text();
  console.clear();
  console.note("\nsweep lr: 1 stopped_early\n");
  drawn();

  EXPECT_EQ(screen.last_column_writes, 0) << screen.last_column_rows.front() << "\n"
                                          << screen.text();
  EXPECT_TRUE(screen.unknown.empty()) << screen.unknown.front();
  ASSERT_GE(screen.before_erase.size(), 5u);
  for (const auto& seen : screen.before_erase) {
    std::string text;
    for (const std::string& line : seen) text += line + "\n";
    EXPECT_FALSE(testing::long_number(text).has_value()) << text;
    std::size_t headers = 0;
    for (const std::string& line : seen) headers += line.rfind("sweep lr: 3 trials", 0) == 0;
    EXPECT_LE(headers, 1u) << text;
  }
  EXPECT_NE(last_table.find("sweep lr: 3 trials | elapsed 0m00s\n"), std::string::npos)
      << last_table;
  EXPECT_NE(last_table.find("\nbest: trial 1, val_loss 0.52 (learni...\n"), std::string::npos)
      << last_table;
  EXPECT_NE(at_60.find("\nbest: trial 1, val_loss 0.52 (learning_rate=0.0457)\n"),
            std::string::npos)
      << at_60;
  // The finished trial scrolled by above the table, broken at spaces, its message's second line
  // a line of its own; the table is gone at the end and the summary is there.
  EXPECT_NE(at_60.find("trial 0 stopped_early in 0m00s, val_loss 0.61\n"
                       "  (learning_rate=0.00316): ASHA: not in the top third\n"
                       "  [1/3]\n"
                       "  second line\n"
                       "sweep lr: 3 trials | elapsed 0m00s\n"
                       "2 running, 0 completed, 1 stopped_early, 0 queued\n"),
            std::string::npos)
      << at_60;
  const std::string final_screen = screen.text();
  EXPECT_EQ(final_screen.find("elapsed"), std::string::npos) << final_screen;
  // A terminal that cut the lines instead of re-wrapping them had the cursor go up too far once,
  // erasing what scrolled by above the table (here all of it).
  EXPECT_NE(
      final_screen.find(on_resize == tty_test::OnResize::reflow ? "\n\nsweep lr: 1 stopped_early\n"
                                                                : "sweep lr: 1 stopped_early\n"),
      std::string::npos)
      << final_screen;
}

// A terminal that re-wraps lines when it narrows (tmux, VTE, ...) and one that cuts them (xterm).
TEST(ConsoleProgress, LiveRedrawReplacesTheTableOnAReflowingTerminal) {
  live_redraw_replaces_the_table(tty_test::OnResize::reflow);
}
TEST(ConsoleProgress, LiveRedrawReplacesTheTableOnACuttingTerminal) {
  live_redraw_replaces_the_table(tty_test::OnResize::cut);
}

// Not a terminal: one plain line per event, exact values, no escape sequences.
TEST(ConsoleProgress, PipedIsOneLinePerEvent) {
  std::ostringstream out;
  const TerminalSize size{60, 24};
  ConsoleProgress console(out, setup_for(false, &size));
  const std::vector<scheduler::Device> cpu = {scheduler::Device::cpu()};
  const auto trial = spec(0, 0.0031622776601683794);
  console.note("running lr: 1 trial on cpu");
  console.on_started(trial, cpu);
  console.on_metric(trial, point("train_loss", 0.5, 1));
  console.on_metric(trial, point("val_loss", 0.61, 1));
  console.redraw();
  console.on_finished(trial, {TrialState::completed, "", {}}, cpu[0]);
  console.clear();
  EXPECT_EQ(out.str(),
            "running lr: 1 trial on cpu\n"
            "trial 0 started on cpu:0: learning_rate=0.0031622776601683794\n"
            "trial 0 epoch 1: val_loss 0.6100, train_loss 0.5000\n"
            "trial 0 completed in 0m00s, val_loss 0.6100 "
            "(learning_rate=0.0031622776601683794)  [1/3]\n");
}

// Ctrl-C while a trial waits for a slot: it never ran, so the console (like the store) keeps it
// queued: not counted as finished or interrupted, not listed among the recent finishes.
TEST(ConsoleProgress, ATrialInterruptedBeforeItStartedStaysQueued) {
  std::ostringstream out;
  const TerminalSize size{80, 24};
  ConsoleProgress console(out, setup_for(false, &size));
  const std::vector<scheduler::Device> cpu = {scheduler::Device::cpu()};
  const auto ran = spec(0, 0.01), waited = spec(1, 0.02);
  console.on_started(ran, cpu);
  console.on_finished(ran, {TrialState::interrupted, "interrupted by Ctrl-C", {}}, cpu[0]);
  console.on_finished(waited, {TrialState::interrupted, "interrupted by Ctrl-C", {}}, std::nullopt);
  EXPECT_NE(out.str().find("trial 0 interrupted"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[1/3]"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("trial 1 not started: stays queued for sweep resume\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("trial 1 interrupted"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("[2/3]"), std::string::npos) << out.str();
}

// The best trial so far is picked by common/trial_score.h's rule, as `sweep best` picks: equal
// values go to the lower trial number whichever reported first, and a trial that diverged falls
// behind every trial that did not.
TEST(ConsoleProgress, BestSoFarRanksAsTheStoreDoes) {
  std::ostringstream out;
  const TerminalSize size{100, 24};
  ConsoleProgress console(out, setup_for(true, &size));
  const std::vector<scheduler::Device> cpu = {scheduler::Device::cpu()};
  const auto t0 = spec(0, 0.01), t1 = spec(1, 0.02), t2 = spec(2, 0.03);
  const auto best_line = [&] {
    out.str("");
    console.redraw();
    const std::string text = out.str();
    const auto at = text.find("best: ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  console.on_started(t1, cpu);
  console.on_started(t0, cpu);
  console.on_metric(t1, point("val_loss", 0.5, 1));
  EXPECT_NE(best_line().find("best: trial 1,"), std::string::npos) << best_line();
  console.on_metric(t0, point("val_loss", 0.5, 1));  // a tie, reported later: the lower number
  EXPECT_NE(best_line().find("best: trial 0,"), std::string::npos) << best_line();
  console.on_started(t2, cpu);
  console.on_metric(t2, point("val_loss", 0.1, 1));
  EXPECT_NE(best_line().find("best: trial 2,"), std::string::npos) << best_line();
  console.on_finished(t2, {TrialState::diverged, "loss became NaN", {}}, cpu[0]);
  EXPECT_NE(best_line().find("best: trial 0,"), std::string::npos) << best_line();
  console.clear();
}

}  // namespace
}  // namespace sweep::run
