// render_report() and the JSON it embeds: content, escaping, odd sweeps, size.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/json.h"
#include "reports/assets.h"
#include "reports/report.h"
#include "reports/report_payload.h"
#include "tests/reports/synthetic_sweep.h"

namespace sweep::reports {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The JSON between <script type="application/json" id="report-data"> and </script>.
sweep::Json embedded_payload(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const auto begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  const auto start = begin + open.size();
  const auto end = html.find("</script>", start);
  EXPECT_NE(end, std::string::npos);
  return sweep::Json::parse(html.substr(start, end - start));
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(RenderReport, IsOneSelfContainedPageWithEveryChartCard) {
  const std::string html = render_report(testing::make_synthetic_sweep());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find(std::string(assets::echarts_js().substr(0, 200))), std::string::npos);
  EXPECT_GT(assets::echarts_js().size(), 500'000u);
  for (const char* id : {"chart-heatmap", "chart-vs-param", "chart-history", "chart-importance",
                         "chart-curves-metric", "chart-curves-loss", "chart-parallel",
                         "chart-confusion", "chart-time", "trials-table", "report-status"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  // No network: nothing is loaded from anywhere.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("https://cdn"), std::string::npos);
}

TEST(RenderReport, SummaryNamesTheWinnerAndTheMargin) {
  const ReportData data = testing::make_synthetic_sweep();
  const std::string html = render_report(data);
  const sweep::Json payload = embedded_payload(html);
  ASSERT_TRUE(payload["best"].is_number());
  const auto& best = payload["trials"][payload["best"].get<std::size_t>()];
  EXPECT_EQ(best["p"][0], 64);  // params sorted by name: batch_size, learning_rate
  EXPECT_NE(html.find("Best trial"), std::string::npos);
  EXPECT_NE(html.find("trial #" + std::to_string(best["n"].get<int>())), std::string::npos);
  EXPECT_NE(html.find("Next best combination"), std::string::npos);
  EXPECT_NE(html.find("Runner-up trial"), std::string::npos);
  EXPECT_NE(html.find("Median of"), std::string::npos);
  EXPECT_EQ(payload["axes"]["x"], 1);  // learning_rate across
  EXPECT_EQ(payload["axes"]["y"], 0);  // batch_size down
  EXPECT_EQ(payload["heat"].size(), 15u);
  ASSERT_TRUE(payload["confusion"].is_object());
  EXPECT_EQ(payload["confusion"]["labels"][0], "T-shirt/top");
}

TEST(RenderReport, HostileSweepNameIsShownAndNeverRun) {
  ReportData data = testing::make_synthetic_sweep({.name = "<script>alert(1)</script>"});
  data.trials[0].params["training.optimizer"] = "</script><script>alert(2)</script>";
  data.trials[1].error = "<img src=x onerror=alert(3)>";
  data.config_yaml = "name: '<script>alert(1)</script>'\n";
  const std::string html = render_report(data);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img src=x"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // Exactly the page's own script elements: the status recorder, the data, ECharts, report.js.
  EXPECT_EQ(count(html, "</script>"), 4u);
  const sweep::Json payload = embedded_payload(html);
  EXPECT_EQ(payload["name"], "<script>alert(1)</script>");
  EXPECT_EQ(payload["trials"][1]["error"], "<img src=x onerror=alert(3)>");
}

TEST(RenderReport, EmptySweepRendersAndSaysSo) {
  ReportData data;
  data.name = "empty";
  const std::string html = render_report(data);
  EXPECT_NE(html.find("This sweep has no trials yet."), std::string::npos);
  const sweep::Json payload = embedded_payload(html);
  EXPECT_TRUE(payload["trials"].empty());
  EXPECT_TRUE(payload["best"].is_null());
  EXPECT_TRUE(payload["heat"].empty());
  EXPECT_TRUE(payload["axes"]["x"].is_null());
  EXPECT_TRUE(payload["confusion"].is_null());
}

TEST(RenderReport, SingleTrialSweepHasABestTrialAndNoAxes) {
  ReportData data = testing::make_synthetic_sweep(
      {.learning_rates = {0.01}, .batch_sizes = {64}, .with_misfits = false});
  ASSERT_EQ(data.trials.size(), 1u);
  const std::string html = render_report(data);
  const sweep::Json payload = embedded_payload(html);
  EXPECT_EQ(payload["best"], 0);
  EXPECT_TRUE(payload["params"].empty());
  EXPECT_TRUE(payload["axes"]["x"].is_null());
  EXPECT_TRUE(payload["curves"][0]["m"].is_object());
  EXPECT_EQ(html.find("Next best"), std::string::npos);
}

TEST(RenderReport, FailedAndDivergedTrialsKeepTheirKindAndText) {
  const ReportData data = testing::make_synthetic_sweep();
  const sweep::Json payload = embedded_payload(render_report(data));
  bool saw_diverged = false, saw_failed = false, saw_stopped = false;
  for (std::size_t i = 0; i < payload["trials"].size(); ++i) {
    const auto& t = payload["trials"][i];
    const auto& c = payload["curves"][i];
    if (t["state"] == "diverged") {
      saw_diverged = true;
      EXPECT_TRUE(t["loss"].is_null());
      EXPECT_EQ(t["lossKind"], "nan");
      ASSERT_TRUE(c["nonfinite"].is_object());
      EXPECT_EQ(c["nonfinite"]["kind"], "nan");
      EXPECT_TRUE(c["l"]["y"].back().is_null());
    }
    if (t["state"] == "failed") {
      saw_failed = true;
      EXPECT_NE(t["error"].get<std::string>().find("out of memory"), std::string::npos);
    }
    if (t["state"] == "stopped_early") {
      saw_stopped = true;
      EXPECT_EQ(t["epochs"], 4);
      EXPECT_NE(t["stop"].get<std::string>().find("asha"), std::string::npos);
    }
  }
  EXPECT_TRUE(saw_diverged && saw_failed && saw_stopped);
  const auto& counts = payload["counts"];
  EXPECT_EQ(counts[0][0], "completed");
}

TEST(RenderReport, AllNaNMetricsStillRender) {
  ReportData data;
  data.name = "nan-only";
  for (int n = 0; n < 3; ++n) {
    TrialData t;
    t.id = n + 1;
    t.number = n;
    t.state = TrialState::diverged;
    t.params = {{"lr", 0.1 * (n + 1)}};
    t.series["val_accuracy"] = {{1, 1, kNaN}};
    t.series["train_loss"] = {{1, 0.5, kNaN}};
    data.trials.push_back(t);
  }
  const std::string html = render_report(data);
  EXPECT_NE(html.find("No trial has reported a finite val_accuracy yet."), std::string::npos);
  const sweep::Json payload = embedded_payload(html);
  EXPECT_TRUE(payload["best"].is_null());
  EXPECT_EQ(payload["trials"][0]["finalKind"], "nan");
}

TEST(RenderReport, PerEpochCurvesStoreOnlyTheirStartAndStep) {
  const sweep::Json payload = embedded_payload(render_report(testing::make_synthetic_sweep()));
  const auto& m = payload["curves"][0]["m"];
  EXPECT_EQ(m["x0"], 1);
  EXPECT_EQ(m["dx"], 1);
  EXPECT_FALSE(m.contains("x"));
  EXPECT_EQ(m["y"].size(), 10u);
}

TEST(RenderReport, LongTrainingLossIsDownsampled) {
  const ReportData data =
      testing::make_synthetic_sweep({.epochs = 50, .loss_points_per_epoch = 40});
  const sweep::Json payload = embedded_payload(render_report(data));
  EXPECT_EQ(payload["curves"][0]["l"]["y"].size(), kMaxLossPoints);
}

TEST(RenderReport, ThousandTrialsOfHundredEpochsStayUnderFiveMegabytes) {
  const ReportData data = testing::make_synthetic_sweep(
      {.learning_rates = {1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1},
       .batch_sizes = {16, 32, 48, 64, 96, 128, 192, 256, 384, 512},
       .momenta = {0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.99},
       .epochs = 100,
       .loss_points_per_epoch = 5});
  ASSERT_EQ(data.trials.size(), 1000u);
  const std::string html = render_report(data);
  EXPECT_LT(html.size(), 5u * 1024 * 1024);
}

TEST(RenderReport, MalformedConfusionMatrixIsIgnored) {
  EXPECT_TRUE(confusion_matrix({{"confusion", {{1, 2}, {3}}}}).empty());
  EXPECT_TRUE(confusion_matrix({{"confusion", {{1, -2}, {3, 4}}}}).empty());
  EXPECT_TRUE(confusion_matrix({{"confusion", "nope"}}).empty());
  const auto flat = confusion_matrix({{"confusion", {1, 2, 3, 4}}, {"classes", 2}});
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_DOUBLE_EQ(flat[1][0], 3);
}

}  // namespace
}  // namespace sweep::reports
