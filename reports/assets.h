/*
 * assets.h — the files the report page is made of, embedded into the binary at build time.
 *
 * The non-obvious decision: the HTML report must work offline and be one file, so ECharts, the
 * page script and the style sheet are compiled in (reports/tools/embed_assets.cpp turns them into
 * a generated .cpp) rather than read from an install directory that may not exist at run time.
 */
#pragma once

#include <string_view>

namespace sweep::reports::assets {

std::string_view echarts_js();  // reports/vendor/echarts/echarts.min.js (Apache ECharts 5.6.0)
std::string_view status_js();   // reports/assets/report_status.js: records errors, drawn charts
std::string_view report_js();   // reports/assets/report.js: charts and table from the JSON data
std::string_view report_css();  // reports/assets/report.css
std::string_view live_js();     // reports/assets/report_live.js: polls the server (sweep serve)

}  // namespace sweep::reports::assets
