/*
 * headless_chromium.cpp — see headless_chromium.h.
 */
#include "tests/browser/headless_chromium.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

namespace sweep::test {

namespace {

// The report writes its status as the text of a <pre>; --dump-dom escapes it as HTML text.
std::string unescape_html_text(std::string text) {
  const std::pair<const char*, const char*> entities[] = {{"&lt;", "<"},          {"&gt;", ">"},
                                                          {"&quot;", "\""},       {"&#39;", "'"},
                                                          {"&nbsp;", "\xC2\xA0"}, {"&amp;", "&"}};
  for (const auto& [from, to] : entities) {
    const std::string f = from, t = to;
    for (auto pos = text.find(f); pos != std::string::npos; pos = text.find(f, pos + t.size()))
      text.replace(pos, f.size(), t);
  }
  return text;
}

}  // namespace

std::string find_chromium() {
  if (const char* env = std::getenv("SWEEP_CHROMIUM"); env && ::access(env, X_OK) == 0) return env;
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(path, X_OK) == 0) return path;
  return "";
}

const char* chromium_missing() {
  return "Chromium is not installed (looked for $SWEEP_CHROMIUM, /usr/bin/chromium, "
         "/usr/bin/chromium-browser): `apt-get install chromium` to run the browser test";
}

int run_headless(const std::string& chromium, const PageLoad& load) {
  std::filesystem::create_directories(load.profile);
  const std::string command =
      "timeout " + std::to_string(load.timeout_s) + " '" + chromium +
      "' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
      " --disable-background-networking --disable-component-update --disable-sync"
      " --user-data-dir='" +
      load.profile.string() +
      "' --virtual-time-budget=" + std::to_string(load.virtual_time_budget_ms) + " " + load.mode +
      " '" + load.url + "' > '" + load.stdout_path.string() + "' 2> '" + load.log_path.string() +
      "'";
  return std::system(command.c_str());
}

sweep::Json element_json(const std::string& dom, const std::string& open_tag,
                         std::string& problem) {
  const auto begin = dom.find(open_tag);
  if (begin == std::string::npos) {
    problem = "no " + open_tag + " in the DOM (" + std::to_string(dom.size()) + " bytes)";
    return nullptr;
  }
  const auto start = begin + open_tag.size();
  const std::string text = unescape_html_text(dom.substr(start, dom.find("</pre>", start) - start));
  if (text.empty()) {
    problem = open_tag + " is empty: the page's script did not run to its end";
    return nullptr;
  }
  return sweep::Json::parse(text);
}

sweep::Json report_status(const std::string& dom, std::string& problem) {
  return element_json(dom, "<pre id=\"report-status\" hidden=\"\">", problem);
}

}  // namespace sweep::test
