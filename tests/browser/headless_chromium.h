/*
 * headless_chromium.h — the one way the tests drive a real browser: Debian's Chromium, headless,
 * loading a page (a report file or `sweep serve`'s live page) and handing back its DOM, and the
 * page's own record of what it did (<pre id="report-status">, written by the report's scripts:
 * errors, charts drawn, live updates). Used by tests/reports and tests/serve.
 */
#pragma once

#include <filesystem>
#include <string>

#include "common/json.h"

namespace sweep::test {

// $SWEEP_CHROMIUM, /usr/bin/chromium or /usr/bin/chromium-browser, the first executable; "".
std::string find_chromium();

// What a test says when it skips for want of Chromium.
const char* chromium_missing();

struct PageLoad {
  std::string url;                    // file:///... or http://...
  std::filesystem::path profile;      // a fresh --user-data-dir (created)
  std::string mode = "--dump-dom";    // or "--window-size=W,H --screenshot='PATH'"
  std::filesystem::path stdout_path;  // what the mode prints (the DOM for --dump-dom)
  std::filesystem::path log_path;     // Chromium's stderr
  int virtual_time_budget_ms = 5000;  // virtual time: runs while no request is pending
  int timeout_s = 120;                // wall-clock limit (timeout(1))
};

// Runs `chromium` headless on load.url in load.mode; returns the exit status of the command.
int run_headless(const std::string& chromium, const PageLoad& load);

// The JSON text of the DOM's element that starts with `open_tag` (a <pre> a page's script wrote
// into); null with `problem` saying why when there is none or it is empty (the script did not
// run, or not to its end).
sweep::Json element_json(const std::string& dom, const std::string& open_tag, std::string& problem);
// The page's record of itself: <pre id="report-status" hidden> (errors, charts, live updates).
sweep::Json report_status(const std::string& dom, std::string& problem);

}  // namespace sweep::test
