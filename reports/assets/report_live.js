/* report_live.js — only in the page `sweep serve` serves: keeps the report up to date without
   reloading it (a reload would lose the reader's zoom, legend choices, filter and sort).
   The non-obvious choices:
   - Long polling: each request names the version the page shows (?since=) and the server holds
     it until the store changes (or ~20 s pass: 304), so an idle sweep costs one stat() a few
     times a second on the server and nothing here, and a change shows within a moment. After
     an update the page waits pollMs before asking again, so a busy sweep redraws at most that
     often.
   - What the poll did is recorded beside report_status.js's record (window.__sweepReport.live:
     polls, updates, finished trials after each, failures), so a headless browser's --dump-dom
     shows the tests that the page updated itself. */
(function () {
  'use strict';
  var status = window.__sweepReport;
  var view = window.__sweepReportView;
  var configEl = document.getElementById('report-live');
  if (!status || !view || !configEl) return;
  var config = JSON.parse(configEl.textContent);
  var WAIT_SECONDS = 20, RETRY_MS = 5000;
  var version = config.version;
  var badge = document.getElementById('live-state');

  function finishedTrials(data) {
    return data.counts.reduce(function (n, c) {
      return c[0] === 'queued' || c[0] === 'running' ? n : n + c[1];
    }, 0);
  }
  var live = status.live = { polls: 0, updates: 0, finished: [finishedTrials(view.data())], failures: [] };
  status.flush();

  function clock() {
    var d = new Date();
    return [d.getHours(), d.getMinutes(), d.getSeconds()].map(function (v) { return String(v).padStart(2, '0'); }).join(':');
  }
  function setBadge(text, ok) {
    if (!badge) return;
    badge.textContent = text;
    badge.className = 'live-state ' + (ok ? 'live-on' : 'live-off');
  }

  // The server-rendered summary: header and best trial are replaced; the sweep card too, with its
  // configuration left open if the reader opened it.
  function replaceSummary(summary) {
    function swap(el, html) {
      if (!el || typeof html !== 'string') return;
      var holder = document.createElement('div');
      holder.innerHTML = html;
      var fresh = holder.firstElementChild;
      if (fresh) el.replaceWith(fresh);
      return fresh;
    }
    swap(document.querySelector('header.top'), summary.header);
    swap(document.getElementById('best-trial'), summary.best);
    var card = document.querySelector('.config-card');
    var wasOpen = !!(card && card.querySelector('details') && card.querySelector('details').open);
    var fresh = swap(card, summary.config);
    if (fresh && wasOpen && fresh.querySelector('details')) fresh.querySelector('details').open = true;
  }

  function apply(update) {
    view.render(update.data);
    replaceSummary(update.summary || {});
    version = update.version;
    live.updates++;
    live.finished.push(finishedTrials(update.data));
    status.flush();
  }

  function schedule(ms) { setTimeout(poll, ms); }
  function poll() {
    live.polls++;
    var url = config.url + '?since=' + encodeURIComponent(version) + '&wait=' + WAIT_SECONDS;
    fetch(url, { cache: 'no-store', headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (response.status === 304) return null;
        if (!response.ok) {
          return response.text().then(function (text) {
            throw new Error('HTTP ' + response.status + ': ' + text.slice(0, 200));
          });
        }
        return response.json();
      })
      .then(function (update) {
        if (update) apply(update);
        setBadge('live · checked ' + clock(), true);
        schedule(config.pollMs);
      })
      .catch(function (e) {
        live.failures.push(String(e && e.message ? e.message : e));
        status.flush();
        setBadge('not updating (' + String(e && e.message ? e.message : e) + '); retrying', false);
        schedule(RETRY_MS);
      });
  }
  setBadge('live', true);
  schedule(config.pollMs);
})();
