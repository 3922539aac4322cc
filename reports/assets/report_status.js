/* report_status.js — runs first, before ECharts: records what went wrong and what got drawn.
   The one non-obvious choice: the record is written into the page itself (<pre id="report-status">,
   JSON), so a headless browser's --dump-dom shows it to the tests without any debugging protocol:
   {errors: [...], expected: [chart ids], finished: [chart ids that fired ECharts' 'finished']}. */
(function () {
  'use strict';
  var report = { errors: [], expected: [], finished: [], done: false };
  window.__sweepReport = report;
  function flush() {
    var el = document.getElementById('report-status');
    if (el) el.textContent = JSON.stringify(report);
  }
  report.flush = flush;
  report.error = function (text) { report.errors.push(String(text)); flush(); };
  window.addEventListener('error', function (e) {
    report.error('window error: ' + (e && e.message ? e.message : e) +
                 (e && e.filename ? ' at ' + e.filename + ':' + e.lineno : ''));
  });
  window.addEventListener('unhandledrejection', function (e) {
    report.error('unhandled rejection: ' + (e && e.reason && e.reason.stack ? e.reason.stack : e && e.reason));
  });
  var consoleError = console.error;
  console.error = function () {
    var parts = [];
    for (var i = 0; i < arguments.length; i++) parts.push(String(arguments[i]));
    report.error('console.error: ' + parts.join(' '));
    return consoleError.apply(console, arguments);
  };
  document.addEventListener('DOMContentLoaded', flush);
})();
