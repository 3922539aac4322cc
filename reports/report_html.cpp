/*
 * report_html.cpp — render_report(): the page's skeleton, its server-side summary, and the data.
 *
 * The non-obvious decision: the answer to "who won and by how much" (header, state counts, best
 * trial card, configuration) is written here as escaped HTML, not by the page's script, so it
 * reads even where scripts are blocked (a mail client, a locked-down viewer); the charts and the
 * table are drawn by reports/assets/report.js from the JSON block. Scripts come last so the
 * summary paints before ECharts (1 MB) is parsed. The live page (report_live.h) is the same page
 * plus a bar, the polling script and its settings; the static file has none of them.
 */
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "common/format.h"
#include "common/json.h"
#include "reports/assets.h"
#include "reports/html_escape.h"
#include "reports/report.h"
#include "reports/report_live.h"
#include "reports/report_model.h"
#include "reports/report_payload.h"

namespace sweep::reports {
namespace {

std::string format_utc(double seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return significant(seconds, 12);
  std::array<char, 40> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text.data();
}

std::string format_duration(double seconds) {
  if (!(seconds >= 0)) return "–";
  std::array<char, 48> text{};
  if (seconds < 60) {
    std::snprintf(text.data(), text.size(), "%.1f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text.data(), text.size(), "%d min %02d s", static_cast<int>(seconds) / 60,
                  static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(text.data(), text.size(), "%d h %02d min", static_cast<int>(seconds) / 3600,
                  (static_cast<int>(seconds) % 3600) / 60);
  }
  return text.data();
}

// A parameter value for people: strings bare, numbers short, anything else as JSON.
std::string state_chip(std::string_view state, std::string_view text) {
  std::string html = "<span class=\"chip state-";
  html += escape_html(state);
  html += "\">";
  html += escape_html(text);
  html += "</span>";
  return html;
}

void meta_item(std::string& html, std::string_view label, const std::string& value) {
  if (value.empty()) return;
  html += "<div class=\"meta-item\"><span class=\"meta-label\">";
  html += escape_html(label);
  html += "</span><span class=\"meta-value\">";
  html += escape_html(value);
  html += "</span></div>";
}

// "learning_rate 0.01 · batch_size 64" for the heatmap cell `cell`.
std::string cell_label(const ReportData& data, const ReportModel& model, const HeatmapCell& cell) {
  std::string text;
  if (model.axes.x) {
    const SweptParam& px = model.swept[*model.axes.x];
    text += px.label + " " + value_text(px.values[cell.x], 6);
  }
  if (model.axes.y) {
    const SweptParam& py = model.swept[*model.axes.y];
    text += " \xC2\xB7 " + py.label + " " + value_text(py.values[cell.y], 6);
  }
  return text;
}

std::string difference_text(double winner, double other, Goal goal) {
  const double margin = std::abs(winner - other);
  std::string text = significant(margin, 3);
  text += goal == Goal::maximize ? " lower" : " higher";
  if (other != 0 && std::isfinite(other)) {
    text += " (" + significant(100.0 * margin / std::abs(other), 2) + "%)";
  }
  return text;
}

void render_header(std::string& html, const ReportData& data) {
  html += "<header class=\"top\"><div class=\"eyebrow\">sweep report</div><h1 id=\"sweep-name\">";
  html += escape_html(data.name.empty() ? std::string("(unnamed sweep)") : data.name);
  html += "</h1><div class=\"meta\">";
  meta_item(
      html, "target",
      data.metric_name + " (" + (data.goal == Goal::maximize ? "maximize" : "minimize") + ")");
  meta_item(html, "state", data.sweep_state);
  meta_item(html, "devices", data.devices);
  meta_item(html, "dataset", data.dataset);
  if (data.created_at > 0) meta_item(html, "created", format_utc(data.created_at));
  if (data.started_at) meta_item(html, "started", format_utc(*data.started_at));
  if (data.finished_at) meta_item(html, "finished", format_utc(*data.finished_at));
  if (data.started_at && data.finished_at)
    meta_item(html, "wall time", format_duration(*data.finished_at - *data.started_at));
  meta_item(html, "config", data.config_path);
  html += "</div><div class=\"chips\" id=\"state-counts\">";
  html += state_chip("total", std::to_string(data.trials.size()) +
                                  (data.trials.size() == 1 ? " trial" : " trials"));
  for (const TrialState st :
       {TrialState::completed, TrialState::stopped_early, TrialState::diverged, TrialState::failed,
        TrialState::cancelled, TrialState::interrupted, TrialState::running, TrialState::queued}) {
    const auto n = std::count_if(data.trials.begin(), data.trials.end(),
                                 [&](const TrialData& t) { return t.state == st; });
    if (n == 0) continue;
    std::string label(to_string(st));
    std::replace(label.begin(), label.end(), '_', ' ');
    html += state_chip(to_string(st), std::to_string(n) + " " + label);
  }
  html += "</div></header>";
}

void render_best(std::string& html, const ReportData& data, const ReportModel& model) {
  html += "<section class=\"card best-card\" id=\"best-trial\"><h2>Best trial</h2>";
  if (!model.best) {
    html += "<p class=\"empty\">";
    html += data.trials.empty()
                ? "This sweep has no trials yet."
                : "No trial has reported a finite " + escape_html(data.metric_name) + " yet.";
    html += "</p></section>";
    return;
  }
  const TrialData& best = data.trials[*model.best];
  const TrialScore& score = model.scores[*model.best];
  // Every trial with a value broke (best_trial_index ranks broken ones last): its value is shown
  // as what it is, never as a result.
  if (is_broken(best.state))
    html += "<p class=\"empty no-success\">No successful trial: every trial that reported " +
            escape_html(data.metric_name) + " failed or diverged. The value below is the best " +
            "of a " + std::string(to_string(best.state)) + " trial, from before it broke.</p>";
  html += "<div class=\"best-headline\"><span class=\"best-value\">";
  html += escape_html(significant(*score.best));
  html += "</span><span class=\"best-metric\">";
  html += escape_html(data.metric_name);
  if (score.best_epoch) html += " at epoch " + escape_html(significant(*score.best_epoch, 4));
  html += "</span></div><p class=\"best-who\">trial #";
  html += std::to_string(best.number);
  html += " ";
  html += state_chip(to_string(best.state), std::string(to_string(best.state)));
  if (!best.device.empty()) html += " on " + escape_html(best.device);
  if (const auto secs = trial_seconds(best))
    html += " \xC2\xB7 " + escape_html(format_duration(*secs));
  html += "</p>";

  // Its parameters, swept ones first and marked.
  html += "<table class=\"kv\">";
  std::vector<std::string> swept_names;
  for (const SweptParam& p : model.swept) swept_names.push_back(p.name);
  auto row = [&](const std::string& name, const Json& value, bool swept) {
    html += swept ? "<tr class=\"swept\"><th>" : "<tr><th>";
    html += escape_html(name);
    html += "</th><td>";
    html += escape_html(value_text(value, 6));
    html += "</td></tr>";
  };
  if (best.params.is_object()) {
    for (const auto& [name, value] : best.params.items())
      if (std::find(swept_names.begin(), swept_names.end(), name) != swept_names.end())
        row(name, value, true);
    for (const auto& [name, value] : best.params.items())
      if (std::find(swept_names.begin(), swept_names.end(), name) == swept_names.end())
        row(name, value, false);
  }
  html += "</table>";

  // By how much: the next best cell of the heatmap (another learning rate / batch size), then the
  // next best trial, then where the field stands.
  html += "<ul class=\"margins\">";
  if (model.best_cell && model.runner_up_cell) {
    const HeatmapCell& other = model.cells[*model.runner_up_cell];
    html += "<li>Next best ";
    html += model.axes.y ? "combination" : "value";
    html += ": <b>" + escape_html(cell_label(data, model, other)) + "</b> reached ";
    html += escape_html(significant(other.value)) + " (trial #" +
            std::to_string(data.trials[other.trial].number) + "), ";
    html += escape_html(difference_text(*score.best, other.value, data.goal)) + ".</li>";
  }
  if (model.runner_up) {
    const double other = *model.scores[*model.runner_up].best;
    html += "<li>Runner-up trial #" + std::to_string(data.trials[*model.runner_up].number) + ": ";
    html += escape_html(significant(other)) + ", " +
            escape_html(difference_text(*score.best, other, data.goal)) + ".</li>";
  }
  std::vector<double> all;
  for (const TrialScore& s : model.scores)
    if (s.best) all.push_back(*s.best);
  if (all.size() >= 3) {
    std::sort(all.begin(), all.end());
    const double median = all.size() % 2 ? all[all.size() / 2]
                                         : 0.5 * (all[all.size() / 2 - 1] + all[all.size() / 2]);
    html += "<li>Median of " + std::to_string(all.size()) +
            " trials: " + escape_html(significant(median)) + "; range " +
            escape_html(significant(all.front())) + " \xE2\x80\x93 " +
            escape_html(significant(all.back())) + ".</li>";
  }
  html += "</ul></section>";
}

void render_config(std::string& html, const ReportData& data, const ReportModel& model) {
  html += "<section class=\"card config-card\"><h2>Sweep</h2>";
  if (!model.swept.empty()) {
    html += "<p class=\"muted\">Swept parameters</p><table class=\"kv\">";
    for (const SweptParam& p : model.swept) {
      html += "<tr class=\"swept\"><th>" + escape_html(p.name) + "</th><td>";
      if (p.values.size() <= 12) {
        for (std::size_t i = 0; i < p.values.size(); ++i)
          html += (i ? ", " : "") + escape_html(value_text(p.values[i], 6));
      } else {
        html += std::to_string(p.values.size()) + " values, " +
                escape_html(value_text(p.values.front(), 6)) + " \xE2\x80\x93 " +
                escape_html(value_text(p.values.back(), 6));
      }
      html += "</td></tr>";
    }
    html += "</table>";
  }
  if (!model.fixed.empty()) {
    html += "<p class=\"muted\">Fixed parameters</p><table class=\"kv\">";
    for (const auto& [name, value] : model.fixed.items())
      html += "<tr><th>" + escape_html(name) + "</th><td>" + escape_html(value_text(value, 6)) +
              "</td></tr>";
    html += "</table>";
  }
  html += "<details class=\"config\"><summary>Configuration";
  if (!data.config_path.empty()) html += " <code>" + escape_html(data.config_path) + "</code>";
  html += "</summary><pre>";
  html += escape_html(data.config_yaml.empty() ? std::string("(not recorded)") : data.config_yaml);
  html += "</pre></details></section>";
}

// A card holding one chart; report.js fills the div and may retitle the card.
void chart_card(std::string& html, const char* id, const std::string& title, const char* note,
                bool wide = false) {
  html += wide ? "<section class=\"card chart-card wide\" id=\"card-"
               : "<section class=\"card chart-card\" id=\"card-";
  html += id;
  html += "\"><h2>";
  html += escape_html(title);
  html += "</h2><p class=\"note\">";
  html += note;
  html += "</p><div class=\"chart\" id=\"chart-";
  html += id;
  html += "\"></div></section>";
}

// The page; `live` adds the bar, the polling script and what it polls (nullptr: the static file).
std::string render_page(const ReportData& data, const LivePage* live) {
  const ReportModel model = analyze(data);
  const std::string payload = script_safe_json(build_payload(data, model));
  const std::string metric = data.metric_name;

  std::string html;
  html.reserve(payload.size() + assets::echarts_js().size() + 64 * 1024);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"generator\" content=\"sweep\"><title>";
  html += escape_html(data.name);
  html += " \xE2\x80\x94 sweep report</title><style>";
  html += assets::report_css();
  html += "</style><script>";
  html += assets::status_js();
  html += "</script></head><body><main>";
  if (live) {
    html += "<nav class=\"live-bar\">";
    if (!live->home_url.empty())
      html += "<a href=\"" + escape_html(live->home_url) + "\" target=\"_top\">all sweeps</a>";
    html += "<span id=\"live-state\" class=\"live-state\">live</span></nav>";
  }

  render_header(html, data);
  html += "<div class=\"summary-grid\">";
  render_best(html, data, model);
  render_config(html, data, model);
  html += "</div><div class=\"chart-grid\">";
  chart_card(html, "heatmap", metric + " by learning rate \xC3\x97 batch size",
             "Each cell is the best trial with those values; other swept parameters are in the "
             "tooltip. The best cell is outlined.");
  chart_card(html, "vs-param", metric + " against learning rate",
             "Best trial per point, one line per batch size.");
  chart_card(html, "history", "History: " + metric + " by trial",
             "Each finished trial's value, coloured by state; the line is the best so far.");
  chart_card(html, "importance", "Parameter importance for " + metric,
             "A random forest of the metric on the swept parameters; \xCF\x81 is the Spearman "
             "correlation.");
  chart_card(
      html, "curves-metric", "Learning curves: " + metric,
      "Every trial, coloured by learning rate; the best trial is the thick line. Markers show "
      "where early-stopped, diverged and failed runs ended.",
      true);
  chart_card(html, "curves-loss", "Learning curves: training loss",
             "Averaged to at most 200 points per trial. Click legend entries to hide groups.",
             true);
  chart_card(html, "parallel", "Every swept parameter \xE2\x86\x92 " + metric,
             "One line per trial; drag along an axis to filter.", true);
  chart_card(html, "confusion", "Confusion matrix of the best trial",
             "Rows: true class, columns: predicted; colour is the share of the row.");
  chart_card(html, "time", "Time per trial", "Wall-clock seconds, coloured by final state.");
  html += "</div>";

  html +=
      "<section class=\"card table-card\" id=\"card-table\"><div class=\"table-head\"><h2>All "
      "trials"
      "</h2><div class=\"table-tools\"><input type=\"search\" id=\"trial-filter\" "
      "placeholder=\"Filter: text, or param=value\" aria-label=\"Filter trials\">"
      "<select id=\"state-filter\" aria-label=\"Filter by state\"><option value=\"\">all states"
      "</option></select><span id=\"trial-count\" class=\"muted\"></span></div></div>"
      "<div class=\"table-wrap\"><table id=\"trials-table\" class=\"trials\"><thead></thead>"
      "<tbody></tbody></table></div></section>";

  html += "<footer>Generated by sweep";
  if (data.generated_at > 0) html += " on " + escape_html(format_utc(data.generated_at));
  html +=
      " \xC2\xB7 charts drawn with Apache ECharts 5.6.0 (Apache License 2.0), embedded: this "
      "file works offline.</footer></main>";
  html += "<pre id=\"report-status\" hidden></pre>";
  html += "<script type=\"application/json\" id=\"report-data\">";
  html += payload;
  html += "</script><script>";
  html += assets::echarts_js();
  html += "</script><script>";
  html += assets::report_js();
  html += "</script>";
  if (live) {
    const sweep::Json config = {
        {"url", live->api_url}, {"version", live->version}, {"pollMs", live->poll_ms}};
    html += "<script type=\"application/json\" id=\"report-live\">";
    html += script_safe_json(config);
    html += "</script><script>";
    html += assets::live_js();
    html += "</script>";
  }
  html += "</body></html>\n";
  return html;
}

}  // namespace

std::string render_report(const ReportData& data) { return render_page(data, nullptr); }

std::string render_live_report(const ReportData& data, const LivePage& live) {
  return render_page(data, &live);
}

sweep::Json live_update(const ReportData& data) {
  const ReportModel model = analyze(data);
  std::string header, best, config;
  render_header(header, data);
  render_best(best, data, model);
  render_config(config, data, model);
  return {{"data", build_payload(data, model)},
          {"summary", {{"header", header}, {"best", best}, {"config", config}}}};
}

}  // namespace sweep::reports
