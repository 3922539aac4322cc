/*
 * report_live.h — the report as a live page (`sweep serve`): the same page as report.h's file,
 * kept up to date from the store while the sweep runs, without reloading.
 *
 * The non-obvious decisions:
 *  - Live is an addition to the static page, not a second page: render_live_report() is
 *    render_report() plus a bar (a link back to the list of sweeps, the live state), the settings
 *    of the poll and reports/assets/report_live.js. The static file carries none of them, so it
 *    opens offline exactly as before.
 *  - An update is what the page was drawn from, again: live_update() is the chart data
 *    (report_payload.h) plus the server-side summary (header, best trial, sweep card) as HTML,
 *    escaped as in the page. report.js redraws its charts with ECharts' merging setOption, so the
 *    reader's zoom and legend choices stay, and refills the table under the reader's filter and
 *    sort.
 *
 * Thread safety: both are pure functions.
 *
 *   reports::LivePage live{.api_url = "/api/sweep/demo", .version = "12.34", .home_url =
 * "/sweeps"}; std::string page = reports::render_live_report(data, live); sweep::Json update =
 * reports::live_update(data);   // {"data": {...}, "summary": {...}}
 */
#pragma once

#include <string>

#include "common/json.h"
#include "reports/report_data.h"

namespace sweep::reports {

struct LivePage {
  std::string api_url;   // polled for updates: answers with live_update() plus "version"
  std::string version;   // the store version the page is drawn from (asked back as ?since=)
  std::string home_url;  // the list of sweeps ("" = no link)
  int poll_ms = 2000;    // the least time between two updates of the page
};

// The report page with the live bar and the polling script.
std::string render_live_report(const ReportData& data, const LivePage& live);

// {"data": the chart data (report_payload.h), "summary": {"header", "best", "config"}: HTML}.
sweep::Json live_update(const ReportData& data);

}  // namespace sweep::reports
