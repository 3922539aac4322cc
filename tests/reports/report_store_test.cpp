// load_report_data / write_report / build_payload against a real SQLite store in a temporary
// directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include "common/check.h"
#include "common/metric_names.h"
#include "common/trial_score.h"
#include "reports/report.h"
#include "reports/report_model.h"
#include "reports/report_payload.h"
#include "store/store.h"
#include "tests/reports/synthetic_store.h"
#include "tests/reports/synthetic_sweep.h"

namespace sweep::reports {
namespace {

namespace fs = std::filesystem;

class ReportStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sweep-report-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(ReportStore, LoadsEveryTrialAndSeriesBackAsWritten) {
  const ReportData original = testing::make_synthetic_sweep();
  Store store(dir_ / "sweep.db");
  const std::int64_t sweep_id = testing::store_sweep(store, original);

  const ReportData loaded = load_report_data(store, original.name);
  EXPECT_EQ(loaded.name, original.name);
  EXPECT_EQ(loaded.metric_name, "val_accuracy");
  EXPECT_EQ(loaded.goal, Goal::maximize);
  EXPECT_EQ(loaded.dataset, "fashion-mnist");  // read from the config's data.dataset
  EXPECT_EQ(loaded.devices, original.devices);
  EXPECT_EQ(loaded.sweep_state, "completed");
  ASSERT_TRUE(loaded.started_at && loaded.finished_at);
  ASSERT_EQ(loaded.trials.size(), original.trials.size());
  for (std::size_t i = 0; i < original.trials.size(); ++i) {
    const TrialData& a = original.trials[i];
    const TrialData& b = loaded.trials[i];
    EXPECT_EQ(b.number, a.number);
    EXPECT_EQ(b.state, a.state) << "trial " << a.number;
    EXPECT_EQ(b.params, a.params);
    EXPECT_EQ(b.error, a.error);
    EXPECT_EQ(b.stop_reason, a.stop_reason);
    EXPECT_EQ(b.summary, a.summary);
    ASSERT_EQ(b.series.size(), a.series.size());
    for (const auto& [name, points] : a.series) {
      const auto& got = b.series.at(name);
      ASSERT_EQ(got.size(), points.size()) << name;
      for (std::size_t k = 0; k < points.size(); ++k) {
        EXPECT_EQ(got[k].step, points[k].step);
        EXPECT_DOUBLE_EQ(got[k].epoch, points[k].epoch);
        if (std::isnan(points[k].value))
          EXPECT_TRUE(std::isnan(got[k].value));  // NaN survives
        else
          EXPECT_DOUBLE_EQ(got[k].value, points[k].value);
      }
    }
  }
  // By numeric id too.
  EXPECT_EQ(load_report_data(store, std::to_string(sweep_id)).trials.size(),
            original.trials.size());
}

// One rule for the best trial (Store::best_trial, best_trial_index): a broken trial ranks below
// every other; when only broken trials have a value, both pick the best of them, and the page says
// that there is no successful trial instead of presenting it as the winner.
TEST_F(ReportStore, TheStoreAndTheReportPickOneBestAndSayWhenNoTrialSucceeded) {
  Store store(dir_ / "sweep.db");
  const auto add = [&](const std::string& name, const std::vector<TrialState>& states,
                       const std::vector<double>& values) {
    ReportData data;
    data.name = name;
    for (std::size_t i = 0; i < states.size(); ++i) {
      TrialData t;
      t.number = static_cast<std::int64_t>(i);
      t.state = states[i];
      t.params = {{"lr", 0.1 * static_cast<double>(i + 1)}};
      t.series["val_accuracy"] = {{1, 1.0, values[i]}};
      data.trials.push_back(t);
    }
    return testing::store_sweep(store, data);
  };
  const auto mixed = add("mixed", {TrialState::diverged, TrialState::completed, TrialState::failed},
                         {0.96, 0.6, 0.97});
  const auto broken = add("broken", {TrialState::failed, TrialState::diverged, TrialState::failed},
                          {0.69, 0.5, 0.8});
  for (const auto& [id, name, number] :
       {std::tuple{mixed, std::string("mixed"), 1}, std::tuple{broken, std::string("broken"), 2}}) {
    const ReportData data = load_report_data(store, name);
    const auto best = best_trial_index(data, score_trials(data));
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(data.trials[*best].number, number) << name;
    EXPECT_EQ(store.best_trial(id)->trial.number, number) << name;
    const std::string page = render_report(data);
    EXPECT_EQ(page.find("No successful trial") != std::string::npos, name == "broken") << name;
  }
}

TEST_F(ReportStore, UnknownSweepThrowsANamedError) {
  Store store(dir_ / "sweep.db");
  try {
    (void)load_report_data(store, "nope");
    FAIL() << "expected sweep::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no sweep named 'nope'"), std::string::npos) << e.what();
  }
}

TEST_F(ReportStore, WriteReportIsAtomicAndEscapesTheHostileName) {
  const ReportData original = testing::make_synthetic_sweep(
      {.name = "<script>alert(1)</script>", .learning_rates = {0.01, 0.1}});
  {
    Store writer(dir_ / "sweep.db");
    testing::store_sweep(writer, original);
  }
  Store reader(dir_ / "sweep.db", {.read_only = true});
  const fs::path out = dir_ / "nested" / "report.html";
  write_report(reader, original.name, out.string());
  const std::string html = read_file(out);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("Generated by sweep on "), std::string::npos);
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::others_read, fs::perms::others_read);
  // Rewriting replaces the file whole and leaves no temporary file behind.
  write_report(reader, original.name, out.string());
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(out.parent_path())) {
    ++files;
    EXPECT_EQ(entry.path().filename(), "report.html");
  }
  EXPECT_EQ(files, 1u);
}

TEST_F(ReportStore, EmptySweepAndRunningSweepLoad) {
  Store store(dir_ / "sweep.db");
  ReportData empty;
  empty.name = "empty";
  empty.config_yaml = "not: [valid";  // a config that does not parse loses only the class names
  testing::store_sweep(store, empty);
  const ReportData loaded = load_report_data(store, "empty");
  EXPECT_TRUE(loaded.trials.empty());
  EXPECT_EQ(loaded.dataset, "");
  EXPECT_NE(render_report(loaded).find("This sweep has no trials yet."), std::string::npos);

  ReportData running = testing::make_synthetic_sweep({.name = "live", .with_misfits = false});
  running.trials[0].state = TrialState::running;
  running.trials[1].state = TrialState::queued;
  running.trials[1].series.clear();
  testing::store_sweep(store, running);
  const ReportData live = load_report_data(store, "live");
  EXPECT_EQ(live.trials[0].state, TrialState::running);
  EXPECT_FALSE(live.trials[0].series.empty());
  EXPECT_EQ(live.trials[1].state, TrialState::queued);
  EXPECT_TRUE(live.trials[1].series.empty());
}

TEST_F(ReportStore, WriteFileAtomicallyReportsAnUnwritableDirectory) {
  const fs::path blocker = dir_ / "file";
  std::ofstream(blocker) << "x";
  EXPECT_THROW(write_file_atomically(blocker / "report.html", "text"), Error);
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Only a regular file is replaced: a link's target is written and the link stays; a file keeps
// its mode. (A report or an export replaced whatever was at the path with a new 0644 file.)
TEST_F(ReportStore, WriteFileAtomicallyWritesALinksTargetAndKeepsAFilesMode) {
  const fs::path real = dir_ / "real.csv", link = dir_ / "link.csv";
  std::ofstream(real) << "old";
  fs::create_symlink("real.csv", link);
  write_file_atomically(link, "new");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read_all(real), "new");
  const fs::path dangling = dir_ / "dangling.csv";
  fs::create_symlink("made/by/link.csv", dangling);
  write_file_atomically(dangling, "made");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dangling)));
  EXPECT_EQ(read_all(dir_ / "made/by/link.csv"), "made");

  const fs::path secret = dir_ / "secret.json";
  std::ofstream(secret) << "old";
  fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(secret, "new");
  EXPECT_EQ(fs::status(secret).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(read_all(secret), "new");
  write_file_atomically(dir_ / "fresh.json", "x");
  EXPECT_EQ(fs::status(dir_ / "fresh.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
}

// A device or a pipe is written to as it is and stays what it was: -o /dev/full fails with the
// device's reason (it became a regular file, and the export said "wrote /dev/full").
TEST_F(ReportStore, WriteFileAtomicallyWritesADeviceOrAPipeInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_all(fifo); });
  write_file_atomically(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));

  // Our own nodes of /dev/null and /dev/full (char 1,3 and 1,7), where we may make them (root).
  const fs::path null = dir_ / "null", full = dir_ / "full";
  if (::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0 ||
      ::mknod(full.c_str(), S_IFCHR | 0666, ::makedev(1, 7)) != 0)
    GTEST_SKIP() << "cannot make device nodes here (" << std::strerror(errno) << ")";
  write_file_atomically(null, "gone");
  EXPECT_TRUE(fs::is_character_file(null));
  try {
    write_file_atomically(full, std::string(1 << 16, 'x'));
    ADD_FAILURE() << "a full device took the text";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write " + full.string() + ": No space left on device");
  }
  EXPECT_TRUE(fs::is_character_file(full));
}

// One rule (common/trial_score.h) everywhere: on series with NaN, infinities, ties, broken trials,
// trials without points and both goals, Store::best_trial, the report's best trial and every
// trial's "best" in `sweep export` are what the rule computes from the same points in memory.
TEST_F(ReportStore, StoreReportAndExportPickTheBestByTheOneRule) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  using Series = std::vector<std::pair<std::int64_t, double>>;  // (step, value)
  struct Case {
    const char* name;
    std::vector<std::pair<Series, TrialState>> trials;
  };
  const std::vector<Case> cases = {
      {"empty", {{{}, TrialState::completed}, {{}, TrialState::failed}}},
      {"nonfinite",
       {{{{1, kNaN}, {2, kInf}}, TrialState::diverged}, {{{1, -kInf}}, TrialState::completed}}},
      {"tie_same_step",
       {{{{1, 0.5}, {2, 0.7}}, TrialState::completed},
        {{{1, 0.3}, {2, 0.7}}, TrialState::completed}}},
      {"tie_earlier_step",
       {{{{1, 0.2}, {3, 0.7}}, TrialState::completed},
        {{{2, 0.7}, {3, kNaN}}, TrialState::stopped_early}}},
      {"broken_last",
       {{{{1, 0.99}, {2, 0.01}}, TrialState::diverged},
        {{{1, 0.5}}, TrialState::completed},
        {{{1, 0.6}}, TrialState::running}}},
      {"all_broken",
       {{{{1, 0.4}}, TrialState::failed}, {{{1, 0.6}, {2, kNaN}}, TrialState::diverged}}},
      {"signed_zero",
       {{{{1, 0.0}}, TrialState::completed},
        {{{1, -0.0}}, TrialState::completed},
        {{{1, 1.0}, {2, -1.0}}, TrialState::completed}}},
  };
  Store store(dir_ / "sweep.db");
  for (const Case& c : cases) {
    for (const Goal goal : {Goal::maximize, Goal::minimize}) {
      ReportData data;
      data.name = std::string(c.name) + (goal == Goal::maximize ? "_max" : "_min");
      data.goal = goal;
      data.config_yaml = "name: " + data.name + "\n";
      std::optional<RankedTrial> expected;
      std::vector<TrialScore> scores;
      for (std::size_t i = 0; i < c.trials.size(); ++i) {
        TrialData t;
        t.number = static_cast<std::int64_t>(i);
        t.state = c.trials[i].second;
        t.params = {{"lr", static_cast<double>(i)}};
        TrialScore score;
        for (const auto& [step, value] : c.trials[i].first) {
          t.series[data.metric_name].push_back({step, static_cast<double>(step), value});
          score.add(step, value, goal);
        }
        const RankedTrial entry = ranked(score, t.number, t.state);
        if (entry.best && (!expected || ranks_before(entry, *expected, goal))) expected = entry;
        scores.push_back(score);
        data.trials.push_back(std::move(t));
      }
      SCOPED_TRACE(data.name);
      const std::int64_t sweep_id = testing::store_sweep(store, data);

      const std::optional<BestTrial> stored = store.best_trial(sweep_id);
      const ReportModel model = analyze(load_report_data(store, data.name));
      ASSERT_EQ(stored.has_value(), expected.has_value());
      ASSERT_EQ(model.best.has_value(), expected.has_value());
      if (expected) {
        EXPECT_EQ(stored->trial.number, expected->number);
        EXPECT_EQ(stored->value, *expected->best);
        EXPECT_EQ(stored->step, expected->best_step);
        EXPECT_EQ(static_cast<std::int64_t>(*model.best), expected->number);
      }
      const sweep::Json exported = store.export_json(sweep_id);
      for (const sweep::Json& row : exported.at("trials")) {
        const auto i = row.at("number").get<std::size_t>();
        const sweep::Json& best = row.at("best");
        if (scores[i].best)
          EXPECT_EQ(best.at(data.metric_name).get<double>(), *scores[i].best) << "trial " << i;
        else
          EXPECT_TRUE(!best.contains(data.metric_name) || best.at(data.metric_name).is_null())
              << "trial " << i;
      }
    }
  }
}

// A sweep of one running trial (no summary yet) whose images/s series is stored under `series`:
// what the page draws of it.
sweep::Json payload_of_running_trial(const fs::path& dir, const std::string& series) {
  ReportData data;
  data.name = "running";
  data.config_yaml = "name: running\n";
  TrialData t;
  t.state = TrialState::running;
  t.params = {{"lr", 0.1}};
  t.series[metric_names::kValAccuracy] = {{1, 1.0, 0.5}};
  t.series[series] = {{1, 1.0, 1200.0}, {2, 2.0, 1500.0}};
  data.trials.push_back(t);
  Store store(dir / "sweep.db");
  testing::store_sweep(store, data);
  const ReportData loaded = load_report_data(store, "running");
  return build_payload(loaded, analyze(loaded));
}

// The trainer writes its rate as metric_names::kImagesPerSecond; a running trial has no summary
// yet, so the report shows the series' latest value.
TEST_F(ReportStore, RunningTrialShowsTheImagesPerSecondTheTrainerWrites) {
  const sweep::Json p = payload_of_running_trial(dir_, metric_names::kImagesPerSecond);
  ASSERT_EQ(p.at("trials").size(), 1u);
  EXPECT_EQ(p.at("trials")[0].at("ips"), 1500);
}

// A store written before the series was renamed holds it as images_per_sec: still shown.
TEST_F(ReportStore, RunningTrialOfAnOlderStoreShowsItsImagesPerSec) {
  const sweep::Json p = payload_of_running_trial(dir_, metric_names::kImagesPerSecondBefore);
  EXPECT_EQ(p.at("trials")[0].at("ips"), 1500);
}

}  // namespace
}  // namespace sweep::reports
