// The report in a real browser: Debian's Chromium, headless, loads the page from a file with no
// network; the page records script errors and which ECharts charts finished drawing into
// <pre id="report-status">, which --dump-dom hands back. Skipped (with the reason) when Chromium
// is not installed. The screenshot and the page stay in the test's output directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "common/json.h"
#include "reports/html_escape.h"
#include "reports/report.h"
#include "reports/report_live.h"
#include "reports/report_model.h"
#include "tests/browser/headless_chromium.h"
#include "tests/reports/synthetic_sweep.h"

namespace sweep::reports {
namespace {

namespace fs = std::filesystem;

const char* const kAllCharts[] = {"heatmap",    "vs-param",      "history",
                                  "importance", "curves-metric", "curves-loss",
                                  "parallel",   "confusion",     "time"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class ReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = test::find_chromium();
    if (chromium_.empty()) GTEST_SKIP() << test::chromium_missing();
    std::string pattern = (fs::temp_directory_path() / "sweep-report-browser-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    temp_ = pattern;
    out_ = fs::path(SWEEP_REPORTS_TEST_OUTPUT_DIR) / "browser";
    fs::create_directories(out_);
  }
  void TearDown() override {
    if (!temp_.empty()) fs::remove_all(temp_);
  }

  // Runs Chromium headless on `page` with `mode_args`; stdout to `stdout_path`. Returns the exit
  // status.
  int chromium(const fs::path& page, const std::string& mode_args, const fs::path& stdout_path,
               const std::string& fragment = "") {
    test::PageLoad load;
    load.url = "file://" + page.string() + fragment;
    load.profile = temp_ / ("profile-" + std::to_string(runs_++));
    load.mode = mode_args;
    load.stdout_path = stdout_path;
    load.log_path = temp_ / "chromium.log";
    return test::run_headless(chromium_, load);
  }

  // Loads `page`, returns the page's own record of errors and drawn charts.
  sweep::Json load_and_read_status(const fs::path& page, const std::string& name,
                                   std::string* dom_out, const std::string& fragment = "") {
    const fs::path dom_path = out_ / (name + ".dom.html");
    const int rc = chromium(page, "--dump-dom", dom_path, fragment);
    EXPECT_EQ(rc, 0) << "chromium --dump-dom failed; its log:\n"
                     << read_file(temp_ / "chromium.log");
    const std::string dom = read_file(dom_path);
    if (dom_out) *dom_out = dom;
    std::string problem;
    const sweep::Json status = test::report_status(dom, problem);
    if (status.is_null()) {
      ADD_FAILURE() << problem;
      return sweep::Json::object();
    }
    return status;
  }

  static void expect_clean(const sweep::Json& status, const std::vector<std::string>& expected) {
    ASSERT_TRUE(status.is_object());
    EXPECT_TRUE(status["errors"].empty()) << "errors in the page:\n" << status["errors"].dump(2);
    EXPECT_EQ(status["done"], true) << "report.js did not run to its end";
    std::vector<std::string> want = expected, got_expected, finished;
    for (const auto& id : status["expected"]) got_expected.push_back(id);
    for (const auto& id : status["finished"]) finished.push_back(id);
    std::sort(want.begin(), want.end());
    std::sort(got_expected.begin(), got_expected.end());
    std::sort(finished.begin(), finished.end());
    EXPECT_EQ(got_expected, want) << "charts the page set out to draw";
    EXPECT_EQ(finished, want) << "charts that fired ECharts' 'finished' event";
  }

  std::string chromium_;
  fs::path temp_, out_;
  int runs_ = 0;
};

TEST_F(ReportBrowser, FullSweepDrawsEveryChartWithoutErrorsAndRunsNoInjectedScript) {
  const std::string hostile_name =
      "<script>document.documentElement.setAttribute('data-pwned','name')</script>lr-bs <&> sweep";
  ReportData data = testing::make_synthetic_sweep({.name = hostile_name});
  data.trials[2].params["training.optimizer"] =
      "</script><img src=x "
      "onerror=\"document.documentElement.setAttribute('data-pwned','param')\">";
  data.trials[3].error =
      "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','error')\">";
  data.config_yaml +=
      "# </script><script>document.documentElement.setAttribute('data-pwned','config')</script>\n";
  data.generated_at = 1'700'000'500;

  const fs::path page = temp_ / "report.html";
  write_file_atomically(page, render_report(data));
  fs::copy_file(page, out_ / "report.html", fs::copy_options::overwrite_existing);

  std::string dom;
  const sweep::Json status = load_and_read_status(page, "report", &dom);
  expect_clean(status, {std::begin(kAllCharts), std::end(kAllCharts)});
  // The hostile texts are in the page as text; only a script that ran could make the attribute.
  EXPECT_EQ(dom.find("data-pwned=\""), std::string::npos) << "an injected script or handler ran";
  EXPECT_NE(dom.find("id=\"sweep-name\">&lt;script&gt;document.documentElement"), std::string::npos)
      << "the hostile name is not shown as text";
  EXPECT_NE(dom.find(std::to_string(data.trials.size()) + " trials"), std::string::npos)
      << "the trials table did not fill";

  // Hover every chart's first items (report.js does it for #check-tooltips) and keep the tooltips'
  // HTML in the page: the hostile texts must arrive as text there too.
  std::string tips_dom;
  const sweep::Json tips_status =
      load_and_read_status(page, "tooltips", &tips_dom, "#check-tooltips");
  expect_clean(tips_status, {std::begin(kAllCharts), std::end(kAllCharts)});
  EXPECT_EQ(tips_dom.find("data-pwned=\""), std::string::npos) << "a tooltip ran injected HTML";
  std::size_t tips = 0;
  for (auto pos = tips_dom.find("<div class=\"tip\">"); pos != std::string::npos;
       pos = tips_dom.find("<div class=\"tip\">", pos + 1))
    ++tips;
  EXPECT_GT(tips, 30u) << "the tooltips were not exercised";
  EXPECT_NE(tips_dom.find("error: &lt;img src=x onerror="), std::string::npos)
      << "the failed trial's hostile error text is not in any tooltip";

  const fs::path shot = out_ / "report.png";
  fs::remove(shot);
  const fs::path ignored = temp_ / "screenshot.out";
  EXPECT_EQ(chromium(page, "--window-size=1400,3000 --screenshot='" + shot.string() + "'", ignored),
            0)
      << read_file(temp_ / "chromium.log");
  ASSERT_TRUE(fs::exists(shot)) << "no screenshot written";
  EXPECT_GT(fs::file_size(shot), 50'000u) << "the screenshot is suspiciously small (blank page?)";
  std::cout << "report screenshot: " << fs::absolute(shot).string() << "\n"
            << "report page:       " << fs::absolute(out_ / "report.html").string() << std::endl;
  RecordProperty("screenshot", fs::absolute(shot).string());
}

TEST_F(ReportBrowser, EmptySweepOneParameterSweepAndNaNOnlySweepDrawWithoutErrors) {
  ReportData empty;
  empty.name = "empty";
  const fs::path empty_page = temp_ / "empty.html";
  write_file_atomically(empty_page, render_report(empty));
  expect_clean(load_and_read_status(empty_page, "empty", nullptr), {});

  // One swept parameter: a bar chart instead of the heatmap, one line in the parameter chart.
  // Of its 5 trials one failed and one diverged: too few for parameter importance, which says so.
  ReportData one = testing::make_synthetic_sweep({.name = "one-param", .batch_sizes = {64}});
  const fs::path one_page = temp_ / "one.html";
  write_file_atomically(one_page, render_report(one));
  std::vector<std::string> all_but_importance;
  for (const char* id : kAllCharts)
    if (std::string(id) != "importance") all_but_importance.push_back(id);
  std::string one_dom;
  expect_clean(load_and_read_status(one_page, "one-param", &one_dom), all_but_importance);
  EXPECT_NE(one_dom.find("finite val_accuracy; there are 3 so far."), std::string::npos);

  // Two trials, every metric NaN: nothing to rank, but the curves and times still draw.
  ReportData nan = testing::make_synthetic_sweep({.name = "nan-only",
                                                  .learning_rates = {0.01, 0.1},
                                                  .batch_sizes = {64},
                                                  .with_misfits = false,
                                                  .with_confusion = false});
  for (TrialData& t : nan.trials) {
    t.state = TrialState::diverged;
    for (auto& point : t.series["val_accuracy"])
      point.value = std::numeric_limits<double>::quiet_NaN();
  }
  const fs::path nan_page = temp_ / "nan.html";
  write_file_atomically(nan_page, render_report(nan));
  std::string nan_dom;
  expect_clean(load_and_read_status(nan_page, "nan-only", &nan_dom), {"curves-loss", "time"});
  // The history says why it has no chart, naming the trials instead of dropping them.
  EXPECT_NE(nan_dom.find("None of the 2 finished trials has a finite val_accuracy (#0 diverged, "
                         "#1 diverged)."),
            std::string::npos);
  EXPECT_NE(nan_dom.find("Parameter importance needs at least 5"), std::string::npos);
}

// A random search: slice plots (several x axes in one chart) and, since trials are missing from
// the learning-rate × batch-size grid, a scatter coloured by the metric instead of the heatmap.
TEST_F(ReportBrowser, RandomSweepDrawsSlicePlotsAndAScatterWithoutErrors) {
  ReportData data = testing::make_synthetic_sweep({.name = "random"});
  data.method = "random";
  const std::optional<std::size_t> winner = analyze(data).best;  // kept: it has the confusion
  for (std::size_t i = data.trials.size(); i-- > 0;)
    if (i % 3 == 1 && i != winner)
      data.trials.erase(data.trials.begin() + static_cast<std::ptrdiff_t>(i));
  const ReportModel model = analyze(data);
  ASSERT_TRUE(model.charts.slices);
  ASSERT_FALSE(model.charts.heatmap);
  const fs::path page = temp_ / "random.html";
  write_file_atomically(page, render_report(data));
  fs::copy_file(page, out_ / "random.html", fs::copy_options::overwrite_existing);
  expect_clean(load_and_read_status(page, "random", nullptr),
               {std::begin(kAllCharts), std::end(kAllCharts)});
  expect_clean(load_and_read_status(page, "random-tooltips", nullptr, "#check-tooltips"),
               {std::begin(kAllCharts), std::end(kAllCharts)});
}

}  // namespace
}  // namespace sweep::reports

namespace sweep::reports {
namespace {

// A live update (what `sweep serve` pushes) redraws into the same charts and table: the reader's
// zoom, hidden legend entries, filter and sort stay; the new trials appear. The page is the
// static report plus a script that plays the reader, then hands report.js the next data.
TEST_F(ReportBrowser, ALiveUpdateKeepsTheReadersZoomLegendFilterAndSort) {
  ReportData before = testing::make_synthetic_sweep({.name = "live", .with_misfits = false});
  ReportData after = before;
  const std::size_t kept = before.trials.size() / 2;
  before.trials.resize(kept);  // half the trials so far; the update brings the rest

  const std::string reader = R"JS(
(function () {
  var view = window.__sweepReportView, out = {};
  var curves = echarts.getInstanceByDom(document.getElementById('chart-curves-metric'));
  curves.dispatchAction({ type: 'dataZoom', dataZoomIndex: 0, start: 20, end: 60 });
  var legend = curves.getOption().legend[0].data[0];
  curves.dispatchAction({ type: 'legendUnSelect', name: legend });
  var filter = document.getElementById('trial-filter');
  filter.value = 'completed';
  filter.dispatchEvent(new Event('input'));
  var heads = document.querySelectorAll('#trials-table thead th');
  heads[0].click(); heads[0].click();  // by trial number, descending
  out.rowsBefore = document.querySelectorAll('#trials-table tbody tr').length;
  view.render(JSON.parse(document.getElementById('next-data').textContent));
  var zoom = curves.getOption().dataZoom[0];
  out.start = zoom.start; out.end = zoom.end;
  out.legendHidden = curves.getOption().legend[0].selected[legend] === false;
  out.filter = document.getElementById('trial-filter').value;
  out.rowsAfter = document.querySelectorAll('#trials-table tbody tr').length;
  out.sorted = document.querySelector('#trials-table thead th').className;
  var first = document.querySelector('#trials-table tbody tr:not([hidden]) td');
  out.firstShown = first ? Number(first.textContent) : null;
  out.sameChart = echarts.getInstanceByDom(document.getElementById('chart-curves-metric')) === curves;
  document.getElementById('live-check').textContent = JSON.stringify(out);
})();
)JS";
  std::string page = render_report(before);
  const std::string extra = "<script type=\"application/json\" id=\"next-data\">" +
                            script_safe_json(live_update(after)["data"]) +
                            "</script><pre id=\"live-check\"></pre><script>" + reader +
                            "</script></body>";
  page.replace(page.rfind("</body>"), 7, extra);
  const fs::path path = temp_ / "live.html";
  write_file_atomically(path, page);

  std::string dom;
  expect_clean(load_and_read_status(path, "live-update", &dom),
               {std::begin(kAllCharts), std::end(kAllCharts)});
  std::string problem;
  const sweep::Json check = test::element_json(dom, "<pre id=\"live-check\">", problem);
  ASSERT_FALSE(check.is_null()) << "the reader's script: " << problem;
  EXPECT_EQ(check["start"], 20) << check.dump();
  EXPECT_EQ(check["end"], 60) << check.dump();
  EXPECT_EQ(check["legendHidden"], true) << check.dump();
  EXPECT_EQ(check["filter"], "completed");
  EXPECT_EQ(check["rowsBefore"], kept);
  EXPECT_EQ(check["rowsAfter"], after.trials.size()) << "the new trials are in the table";
  EXPECT_EQ(check["sorted"], "sorted-desc") << "the reader's sort stays";
  EXPECT_EQ(check["firstShown"], after.trials.back().number) << "sorted by number, descending";
  EXPECT_EQ(check["sameChart"], true);
}

// The history and the importance chart are SVG: their points and bars are elements of the page.
// Before the update 5 trials have finished (too few usable ones for importance: the card says
// why); the update brings the rest, one failed without any value (a cross on the bottom edge),
// and the reader's hidden legend entry stays hidden.
TEST_F(ReportBrowser, HistoryAndImportanceDrawEveryFinishedTrialAndSurviveALiveUpdate) {
  ReportData after = testing::make_synthetic_sweep({.name = "history"});
  after.trials[14].state = TrialState::running;  // not finished: not in the history
  ASSERT_EQ(after.trials[8].state, TrialState::failed);
  after.trials[8].series.erase("val_accuracy");  // failed before its first value
  ReportData before = after;
  before.trials.resize(12);
  for (std::size_t i = 5; i < before.trials.size(); ++i)
    before.trials[i].state = TrialState::running;

  // What the charts should hold, counted from the model (the states' colours are report.css's).
  const auto count = [](const ReportData& data, TrialState state, bool with_value) {
    const ReportModel model = analyze(data);
    std::size_t n = 0;
    for (const HistoryPoint& h : model.history)
      n += data.trials[h.trial].state == state &&
           model.scores[h.trial].best.has_value() == with_value;
    return n;
  };
  ASSERT_EQ(count(before, TrialState::completed, true), 4u);
  ASSERT_EQ(count(before, TrialState::diverged, true), 1u);
  const std::size_t completed = count(after, TrialState::completed, true);
  ASSERT_EQ(completed, 11u);
  ASSERT_EQ(count(after, TrialState::stopped_early, true), 1u);
  ASSERT_EQ(count(after, TrialState::failed, false), 1u);

  const std::string reader = R"JS(
(function () {
  var view = window.__sweepReportView, out = {};
  function fills(id) {  // SVG paths by fill colour: each point is one, each legend icon one
    var counts = {};
    document.querySelectorAll('#chart-' + id + ' svg path').forEach(function (p) {
      var f = (p.getAttribute('fill') || '').toLowerCase();
      counts[f] = (counts[f] || 0) + 1;
    });
    return counts;
  }
  function texts(id) {
    return Array.prototype.map.call(document.querySelectorAll('#chart-' + id + ' svg text'),
                                    function (t) { return t.textContent; });
  }
  var imp = document.getElementById('chart-importance');
  var history = echarts.getInstanceByDom(document.getElementById('chart-history'));
  out.before = { history: fills('history'), importanceEmpty: imp.className === 'empty', importanceText: imp.textContent };
  history.dispatchAction({ type: 'legendUnSelect', name: 'diverged' });
  view.render(JSON.parse(document.getElementById('next-data').textContent));
  out.after = { history: fills('history'), importance: texts('importance'),
                bars: echarts.getInstanceByDom(imp).getOption().series[0].data.length };
  out.sameChart = echarts.getInstanceByDom(document.getElementById('chart-history')) === history;
  out.divergedHidden = history.getOption().legend[0].selected['diverged'] === false;
  document.getElementById('live-check').textContent = JSON.stringify(out);
})();
)JS";
  std::string page = render_report(before);
  const std::string extra = "<script type=\"application/json\" id=\"next-data\">" +
                            script_safe_json(live_update(after)["data"]) +
                            "</script><pre id=\"live-check\"></pre><script>" + reader +
                            "</script></body>";
  page.replace(page.rfind("</body>"), 7, extra);
  const fs::path path = temp_ / "history.html";
  write_file_atomically(path, page);

  std::string dom;
  expect_clean(load_and_read_status(path, "history-live", &dom),
               {std::begin(kAllCharts), std::end(kAllCharts)});
  std::string problem;
  const sweep::Json check = test::element_json(dom, "<pre id=\"live-check\">", problem);
  ASSERT_FALSE(check.is_null()) << "the reader's script: " << problem;
  const char* const kCompleted = "#5302a3";  // report.js: PLASMA[1] (light)
  const char *const kDiverged = "#dc2626", *const kStopped = "#d97706", *const kFailed = "#9f1239";
  const sweep::Json& was = check["before"]["history"];
  EXPECT_EQ(was.value(kCompleted, 0), 4 + 1) << "4 points and the legend icon: " << was.dump();
  EXPECT_EQ(was.value(kDiverged, 0), 1 + 1) << was.dump();
  EXPECT_EQ(check["before"]["importanceEmpty"], true);
  EXPECT_EQ(check["before"]["importanceText"],
            "Parameter importance needs at least 5 completed or early-stopped trials with a finite "
            "val_accuracy; there are 4 so far.");

  const sweep::Json& now = check["after"]["history"];
  EXPECT_EQ(now.value(kCompleted, 0), static_cast<int>(completed) + 1) << now.dump();
  EXPECT_EQ(now.value(kStopped, 0), 1 + 1) << now.dump();
  EXPECT_EQ(now.value(kFailed, 0), 1)
      << "the failed trial without a value is a cross" << now.dump();
  EXPECT_EQ(now.value(kDiverged, 0), 0) << "the reader hid the diverged trials" << now.dump();
  EXPECT_EQ(check["divergedHidden"], true);
  EXPECT_EQ(check["sameChart"], true);

  EXPECT_EQ(check["after"]["bars"], 2);
  std::vector<std::string> texts;
  for (const auto& t : check["after"]["importance"]) texts.push_back(t.get<std::string>());
  const auto has = [&](const std::string& s) {
    return std::find(texts.begin(), texts.end(), s) != texts.end();
  };
  EXPECT_TRUE(has("learning_rate")) << check["after"]["importance"].dump();
  EXPECT_TRUE(has("batch_size")) << check["after"]["importance"].dump();
  const auto with_rho = std::count_if(texts.begin(), texts.end(), [](const std::string& s) {
    return s.find("\xCF\x81 ") != std::string::npos;
  });
  EXPECT_EQ(with_rho, 2) << "one correlation beside each bar: "
                         << check["after"]["importance"].dump();
}

}  // namespace
}  // namespace sweep::reports
