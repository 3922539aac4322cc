/*
 * serve_pages.cpp — the list, compare and error pages of `sweep serve` (serve_pages.h).
 */
#include "sweep/serve/serve_pages.h"

#include <cstdio>
#include <string>

#include "common/format.h"
#include "reports/assets.h"
#include "reports/html_escape.h"
#include "store/store.h"

namespace sweep::serve {
namespace {

using reports::escape_html;

std::string page_start(std::string_view title, bool full_width = false) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"generator\" content=\"sweep\"><title>";
  html += escape_html(title);
  html += "</title><style>";
  html += reports::assets::report_css();
  html += full_width ? "</style></head><body><main class=\"full\">" : "</style></head><body><main>";
  return html;
}

const char* const kPageEnd = "</main></body></html>\n";

std::string chip(std::string_view state, std::string_view text) {
  return "<span class=\"chip state-" + escape_html(state) + "\">" + escape_html(text) + "</span>";
}

std::string words(std::string_view state) {
  std::string text(state);
  for (char& c : text)
    if (c == '_') c = ' ';
  return text;
}

std::string ago(double last_change) {
  if (last_change <= 0) return "–";
  return duration(utc_now() - last_change) + " ago";
}

std::string best_text(const SweepListing& s) {
  if (!s.best) return "–";
  std::string text = significant(*s.best, 5);
  if (s.best_trial) text += " (trial #" + std::to_string(*s.best_trial) + ")";
  return text;
}

std::string state_chips(const SweepListing& s) {
  std::string html;
  if (!s.sweep) return html;
  for (const auto& [state, n] : s.sweep->trials_by_state)
    html += chip(to_string(state), std::to_string(n) + " " + words(to_string(state))) + " ";
  return html;
}

std::string metric_text(const SweepListing& s) {
  if (!s.sweep) return "–";
  return s.sweep->sweep.metric_name + " (" + std::string(to_string(s.sweep->sweep.metric_goal)) +
         ")";
}

// One row of the list (or of the compare table): name, state, trials, metric, best, update.
std::string sweep_row(const SweepListing& s) {
  std::string html = "<tr><td><a href=\"" + escape_html(sweep_page_url(s.name)) + "\">" +
                     escape_html(s.name) + "</a></td>";
  if (!s.sweep) {
    html += "<td colspan=\"5\" class=\"text\">" + escape_html(s.error) + "</td>";
  } else {
    const std::string state(to_string(s.sweep->sweep.state));
    html += "<td>" + chip(state, words(state)) + "</td>";
    html += "<td class=\"num\">" + std::to_string(s.sweep->trial_count) + "</td>";
    html += "<td>" + state_chips(s) + "</td>";
    html += "<td>" + escape_html(metric_text(s)) + "</td>";
    html += "<td class=\"num\">" + escape_html(best_text(s)) + "</td>";
  }
  html += "<td>" + escape_html(ago(s.version.last_change)) + "</td></tr>";
  return html;
}

const char* const kTableHead =
    "<div class=\"table-wrap\"><table class=\"trials\" id=\"sweeps-table\"><thead><tr>"
    "<th>sweep</th><th>state</th><th>trials</th><th>by state</th><th>metric</th><th>best</th>"
    "<th>last update</th></tr></thead><tbody>";

}  // namespace

const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Server Error" : "Error";
  }
}

std::string percent_encode(std::string_view text) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') ||
                            (u >= '0' && u <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::string sweep_page_url(std::string_view name) { return "/sweep/" + percent_encode(name); }
std::string sweep_api_url(std::string_view name) { return "/api/sweep/" + percent_encode(name); }

std::string sweeps_page(const std::filesystem::path& out_dir,
                        const std::vector<SweepListing>& sweeps) {
  std::string html = page_start("sweeps in " + out_dir.string());
  html += "<header class=\"top\"><div class=\"eyebrow\">sweep serve</div><h1>Sweeps in ";
  html += escape_html(out_dir.string());
  html +=
      "</h1><p class=\"muted\">Every OUT/NAME/sweep.db, read-only. A sweep's page updates "
      "itself while the sweep runs.</p></header>";
  html += "<section class=\"card table-card\">";
  if (sweeps.empty()) {
    html +=
        "<p class=\"empty\">No sweeps here yet: start one with <code>sweep run CONFIG</code> "
        "(with <code>--out ";
    html += escape_html(out_dir.string());
    html += "</code> if that is not its output directory).</p>";
  } else {
    html += kTableHead;
    for (const SweepListing& s : sweeps) html += sweep_row(s);
    html += "</tbody></table></div>";
    if (sweeps.size() >= 2) {
      // Two menus and a button: GET /compare?a=...&b=... (the browser encodes the values).
      html +=
          "<form class=\"compare-form\" method=\"get\" action=\"/compare\">"
          "<span>Compare</span>";
      for (const char* field : {"a", "b"}) {
        html += "<select name=\"";
        html += field;
        html += "\" aria-label=\"sweep ";
        html += field;
        html += "\">";
        for (std::size_t i = 0; i < sweeps.size(); ++i) {
          const bool chosen = (field[0] == 'a' && i == 0) || (field[0] == 'b' && i == 1);
          html += chosen ? "<option selected value=\"" : "<option value=\"";
          html += escape_html(sweeps[i].name) + "\">" + escape_html(sweeps[i].name) + "</option>";
        }
        html += "</select>";
      }
      html += "<button type=\"submit\">side by side</button></form>";
    }
  }
  html += "</section>";
  html += kPageEnd;
  return html;
}

std::string compare_page(const SweepListing& a, const SweepListing& b) {
  std::string html = page_start(a.name + " vs " + b.name, true);
  html += "<nav class=\"live-bar\"><a href=\"";
  html += kSweepsUrl;
  html +=
      "\">all sweeps</a></nav><header class=\"top\"><div class=\"eyebrow\">sweep serve</div>"
      "<h1 id=\"compare-title\">";
  html += escape_html(a.name) + " <span class=\"muted\">vs</span> " + escape_html(b.name);
  html += "</h1></header><section class=\"card table-card\">";
  html += kTableHead;
  html += sweep_row(a) + sweep_row(b);
  html += "</tbody></table></div></section><div class=\"compare\">";
  for (const SweepListing* s : {&a, &b}) {
    html += "<iframe src=\"" + escape_html(sweep_page_url(s->name)) + "\" title=\"" +
            escape_html(s->name) + "\"></iframe>";
  }
  html += "</div>";
  html += kPageEnd;
  return html;
}

std::string message_page(int status, std::string_view message) {
  const std::string title = std::to_string(status) + " " + reason_phrase(status);
  std::string html = page_start(title);
  html += "<header class=\"top\"><div class=\"eyebrow\">sweep serve</div><h1>";
  html += escape_html(title);
  html += "</h1></header><section class=\"card\"><p id=\"message\">";
  html += escape_html(message);
  html += "</p><p><a href=\"";
  html += kSweepsUrl;
  html += "\">all sweeps</a></p></section>";
  html += kPageEnd;
  return html;
}

sweep::Json listing_json(const SweepListing& s) {
  sweep::Json j = {{"name", s.name},
                   {"url", sweep_page_url(s.name)},
                   {"api", sweep_api_url(s.name)},
                   {"last_change", s.version.last_change}};
  if (!s.sweep) {
    j["error"] = s.error;
    return j;
  }
  j["state"] = std::string(to_string(s.sweep->sweep.state));
  j["trials"] = s.sweep->trial_count;
  sweep::Json by_state = sweep::Json::object();
  for (const auto& [state, n] : s.sweep->trials_by_state)
    by_state[std::string(to_string(state))] = n;
  j["by_state"] = by_state;
  j["metric"] = s.sweep->sweep.metric_name;
  j["goal"] = std::string(to_string(s.sweep->sweep.metric_goal));
  j["best"] = s.best ? sweep::Json(*s.best) : sweep::Json(nullptr);
  j["best_trial"] = s.best_trial ? sweep::Json(*s.best_trial) : sweep::Json(nullptr);
  return j;
}

}  // namespace sweep::serve
