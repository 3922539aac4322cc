/* report.js — draws the sweep report's charts and trial table from the JSON in #report-data.
   The non-obvious choices:
   - Every text that came from the sweep goes into the page through textContent or esc(): ECharts
     tooltips are HTML, so each formatter escapes what it prints (axis labels and legends are
     drawn on the canvas and need nothing).
   - Each chart is built inside its own try/catch: one broken chart shows a message in its card
     and an entry in #report-status, and the rest of the report still draws.
   - Learning curves are one line series per trial, named after the trial's learning-rate group,
     so the legend has one entry per group and a click hides every trial of that group.
   - Drawing is render(data), which may run again with newer data (report_live.js, when the page
     is served by `sweep serve`): a chart that exists is updated with ECharts' merging setOption
     (series matched by id; dataZoom left alone), so the reader's zoom and legend choices stay,
     and the table is refilled under the reader's filter and sort. The static file calls it once. */
(function () {
  'use strict';
  var status = window.__sweepReport;

  // ---- look ---------------------------------------------------------------------------------
  var rootStyle = getComputedStyle(document.documentElement);
  function cssVar(name) { return rootStyle.getPropertyValue(name).trim(); }
  var dark = !!(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
  var TEXT = cssVar('--text') || '#1f2937', MUTED = cssVar('--muted') || '#6b7280';
  var LINE = cssVar('--line') || '#e5e7eb', BEST = cssVar('--best') || '#059669';
  var STATE_COLOR = {};
  ['completed', 'stopped_early', 'diverged', 'failed', 'cancelled', 'interrupted', 'running', 'queued']
    .forEach(function (s) { STATE_COLOR[s] = cssVar('--' + s) || '#6b7280'; });
  // Plasma, cut before its pale yellow end so every line reads on white.
  // In dark mode its dark-blue start would vanish into the background: start at violet there.
  var PLASMA = dark ? ['#8b0aa5', '#b83289', '#db5c68', '#f48849', '#febd2a', '#f0f921']
                    : ['#0d0887', '#5302a3', '#8b0aa5', '#b83289', '#db5c68', '#f48849', '#e8a21b'];
  // Sequential blue-green for "more is better" maps (light = worse).
  var SEQUENTIAL = dark ? ['#1e293b', '#155e75', '#0e7490', '#14b8a6', '#99f6e4']
                        : ['#f0f9e8', '#bae4bc', '#7bccc4', '#43a2ca', '#0868ac'];
  var CONFUSION = dark ? ['#1e293b', '#0f766e', '#5eead4'] : ['#f8fafc', '#5eead4', '#0f766e', '#134e4a'];
  var FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

  function hexToRgb(h) { var n = parseInt(h.slice(1), 16); return [n >> 16, (n >> 8) & 255, n & 255]; }
  function paletteAt(stops, t) {
    t = Math.max(0, Math.min(1, isFinite(t) ? t : 0.5));
    var f = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(f)), u = f - i;
    var a = hexToRgb(stops[i]), b = hexToRgb(stops[i + 1]);
    return 'rgb(' + [0, 1, 2].map(function (k) { return Math.round(a[k] + (b[k] - a[k]) * u); }).join(',') + ')';
  }

  // Black or white text, whichever reads on `rgb` (an 'rgb(r,g,b)' or '#rrggbb' colour).
  function textOn(color) {
    var c = color.charAt(0) === '#' ? hexToRgb(color) : color.replace(/[^\d,]/g, '').split(',').map(Number);
    var lum = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
    return lum > 0.55 ? '#111827' : '#ffffff';
  }
  // Colour position of each value by rank (0 = worst, 1 = best), so one bad outlier cannot wash
  // out the differences between the good cells; the numbers are printed in the cells anyway.
  function rankPositions(values) {
    var order = values.map(function (v, i) { return i; }).sort(function (a, b) {
      return maximize ? values[a] - values[b] : values[b] - values[a];
    });
    var pos = new Array(values.length);
    order.forEach(function (idx, r) { pos[idx] = values.length > 1 ? r / (values.length - 1) : 1; });
    for (var i = 1; i < order.length; i++)  // equal values, equal colour
      if (values[order[i]] === values[order[i - 1]]) pos[order[i]] = pos[order[i - 1]];
    return pos;
  }

  // ---- text ---------------------------------------------------------------------------------
  var ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return ENTITIES[c]; }); }
  function kindText(kind) { return kind === 'nan' ? 'NaN' : kind === 'inf' ? 'Inf' : kind === '-inf' ? '-Inf' : '–'; }
  function fmtNum(v, digits) {
    if (v === null || v === undefined) return '–';
    if (typeof v !== 'number') return String(v);
    if (!isFinite(v)) return isNaN(v) ? 'NaN' : (v > 0 ? 'Inf' : '-Inf');
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6))
      return v.toExponential(Math.max(0, (digits || 4) - 1)).replace(/\.?0+e/, 'e');
    return String(+v.toPrecision(digits || 4));
  }
  // A parameter value for axes and legends: 3 significant digits ("2.15e-4", "0.01", "64").
  function fmtShort(v) {
    if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e6 ? String(v) : fmtNum(v, 3);
    var text = fmtVal(v);
    return text.length > 22 ? text.slice(0, 21) + '…' : text;
  }
  function fmtVal(v) {
    if (v === null || v === undefined) return '–';
    if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e6 ? String(v) : fmtNum(v, 6);
    if (typeof v === 'string') return v;
    return JSON.stringify(v);
  }
  function fmtSeconds(s) {
    if (s === null || s === undefined) return '–';
    if (s < 60) return s.toFixed(1) + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + String(Math.floor(s % 60)).padStart(2, '0') + ' s';
    return Math.floor(s / 3600) + ' h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + ' min';
  }
  function valueKey(v) { return typeof v === 'number' ? 'n' + v : JSON.stringify(v); }

  // ---- data: set by setData() before each render -------------------------------------------
  var data, params, trials, curves, metric, maximize, px, py, best, lossName, many, groups;
  function setData(d) {
    data = d;
    params = d.params; trials = d.trials; curves = d.curves;
    metric = d.metric; maximize = d.goal === 'maximize';
    px = d.axes.x !== null ? params[d.axes.x] : null;
    py = d.axes.y !== null ? params[d.axes.y] : null;
    best = d.best;
    lossName = d.lossName;
    many = trials.length > 60;
    groups = makeGroups();
  }

  function trialTitle(i) { return 'trial #' + trials[i].n; }
  function paramLines(i) {
    return params.map(function (p, k) {
      return esc(p.label) + ' = <b>' + esc(fmtVal(trials[i].p[k])) + '</b>';
    }).join('<br>');
  }
  function trialTooltip(i, extra) {
    var t = trials[i];
    var html = '<b>' + esc(trialTitle(i)) + '</b> · ' + esc(t.state.replace('_', ' ')) + (i === best ? ' · <b>best</b>' : '');
    if (params.length) html += '<br>' + paramLines(i);
    html += '<br>best ' + esc(metric) + ': <b>' + esc(fmtNum(t.best)) + '</b>';
    if (extra) html += '<br>' + extra;
    if (t.error) html += '<br>error: ' + esc(t.error.length > 200 ? t.error.slice(0, 199) + '…' : t.error);
    return html;
  }

  // Colour groups: one per value of the colour parameter (learning rate when swept), or 8 bins of
  // its range when it takes too many values (random search).
  function makeGroups() {
    if (!px) return { of: function () { return 0; }, list: [{ label: 'trials', color: PLASMA[1] }] };
    var k = data.axes.x, vals = px.values;
    if (vals.length <= 10 || !px.numeric) {
      var index = {};
      vals.forEach(function (v, i) { index[valueKey(v)] = i; });
      var shown = Math.min(vals.length, 10);
      var list = vals.slice(0, shown).map(function (v, i) {
        return { label: px.label + ' ' + fmtShort(v), color: paletteAt(PLASMA, shown === 1 ? 0.5 : i / (shown - 1)) };
      });
      if (vals.length > shown) list.push({ label: px.label + ' other', color: MUTED });
      return {
        of: function (i) { var g = index[valueKey(trials[i].p[k])]; return g === undefined || g >= shown ? list.length - 1 : g; },
        list: list
      };
    }
    var lo = vals[0], hi = vals[vals.length - 1], bins = 8, useLog = px.log;
    var a = useLog ? Math.log(lo) : lo, b = useLog ? Math.log(hi) : hi;
    var edges = [];
    for (var e = 0; e <= bins; e++) edges.push(useLog ? Math.exp(a + (b - a) * e / bins) : a + (b - a) * e / bins);
    var binList = [];
    for (var g = 0; g < bins; g++)
      binList.push({ label: px.label + ' ' + fmtNum(edges[g], 2) + '–' + fmtNum(edges[g + 1], 2), color: paletteAt(PLASMA, g / (bins - 1)) });
    return {
      of: function (i) {
        var v = trials[i].p[k];
        if (typeof v !== 'number') return 0;
        var t = ((useLog ? Math.log(v) : v) - a) / ((b - a) || 1);
        return Math.max(0, Math.min(bins - 1, Math.floor(t * bins)));
      },
      list: binList
    };
  }

  // ---- chart plumbing -----------------------------------------------------------------------
  var charts = {};  // by chart id
  var BASE = {
    animation: false,
    backgroundColor: 'transparent',
    textStyle: { fontFamily: FONT, color: TEXT },
    tooltip: { confine: true, textStyle: { fontFamily: FONT } }
  };
  function merge(a, b) { var out = {}, k; for (k in a) out[k] = a[k]; for (k in b) out[k] = b[k]; return out; }
  function axisStyle(extra) {
    return merge({
      axisLine: { lineStyle: { color: MUTED } },
      axisLabel: { color: MUTED },
      splitLine: { lineStyle: { color: LINE } },
      nameTextStyle: { color: MUTED, fontWeight: 600 }
    }, extra);
  }
  // A value axis named along its side, so the name never collides with a legend on top.
  function sideName(name, gap) { return { name: name, nameLocation: 'middle', nameGap: gap || 48, nameRotate: 90 }; }
  function setTitle(id, text) {
    var h = document.querySelector('#card-' + id + ' h2');
    if (h) h.textContent = text;
  }
  function setNote(id, text) {
    var p = document.querySelector('#card-' + id + ' .note');
    if (p) p.textContent = text;
  }
  function showEmpty(id, text) {
    var el = document.getElementById('chart-' + id);
    if (!el) return;
    if (charts[id]) { charts[id].dispose(); delete charts[id]; }
    el.className = 'empty';
    el.textContent = text;
  }
  // With #check-tooltips in the URL (the browser test), every tooltip's HTML is also copied into
  // a hidden element, and each chart's first items are hovered once below: a formatter that forgot
  // to escape would then create the test's injected elements, which the test looks for.
  var checkTooltips = window.location.hash === '#check-tooltips';
  var tooltipSink = null;
  if (checkTooltips) {
    tooltipSink = document.createElement('div');
    tooltipSink.id = 'tooltip-check';
    tooltipSink.hidden = true;
    document.body.appendChild(tooltipSink);
  }
  function recorded(formatter) {
    return function (p) {
      var html = formatter(p);
      if (tooltipSink) tooltipSink.insertAdjacentHTML('beforeend', '<div class="tip">' + html + '</div>');
      return html;
    };
  }
  // What a merge cannot change in place: axis types, the coordinate systems, the parallel axes.
  function shapeOf(option) {
    function types(axes) { return [].concat(axes || []).map(function (a) { return a.type; }).join(','); }
    return [types(option.xAxis), types(option.yAxis), !!option.parallel, !!option.visualMap,
            (option.parallelAxis || []).length].join('|');
  }
  // `renderer`: 'canvas' unless given; the small charts (history, importance) ask for 'svg', whose
  // points and labels are elements of the page (crisp text; the browser test can count them).
  // A chart keeps the renderer it was made with.
  function draw(id, option, renderer) {
    if (checkTooltips && option.tooltip && typeof option.tooltip.formatter === 'function')
      option.tooltip.formatter = recorded(option.tooltip.formatter);
    // Series are matched by id when the chart is updated: a series without one is named by its
    // type and place, which is stable for every chart but the curves (which set their own).
    (option.series || []).forEach(function (s, k) { if (s.id === undefined) s.id = s.type + ':' + k; });
    var chart = charts[id], shape = shapeOf(option);
    if (chart) {
      if (shape !== chart.sweepShape) {
        chart.setOption(merge(BASE, option), { notMerge: true });
        chart.sweepShape = shape;
        return chart;
      }
      var update = merge({}, option);
      // The reader's zoom lives in the dataZoom components: left out, they stay as they are.
      if ((chart.getOption().dataZoom || []).length) delete update.dataZoom;
      chart.setOption(update, { replaceMerge: ['series'] });
      return chart;
    }
    var el = document.getElementById('chart-' + id);
    if (el.className === 'empty') { el.className = 'chart'; el.textContent = ''; }
    if (status.expected.indexOf(id) < 0) status.expected.push(id);
    chart = echarts.init(el, dark ? 'dark' : null, { renderer: renderer || 'canvas' });
    chart.on('finished', function () {
      if (status.finished.indexOf(id) < 0) { status.finished.push(id); status.flush(); }
    });
    chart.setOption(merge(BASE, option));
    chart.sweepShape = shape;
    charts[id] = chart;
    return chart;
  }
  var sections = [];
  function section(id, build) { sections.push({ id: id, build: build }); }
  function runSections() {
    sections.forEach(function (s) {
      try {
        s.build();
      } catch (e) {
        status.error(s.id + ': ' + (e && e.stack ? e.stack : e));
        showEmpty(s.id, 'This chart could not be drawn: ' + (e && e.message ? e.message : e));
      }
    });
  }
  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (id) { charts[id].resize(); });
  });

  function curvePoints(c) {
    if (!c) return [];
    var out = new Array(c.y.length);
    for (var i = 0; i < c.y.length; i++) {
      var x = c.x ? c.x[i] : c.x0 + i * c.dx;
      out[i] = [+x.toPrecision(6), c.y[i]];
    }
    return out;
  }
  function lastFinite(points) {
    for (var i = points.length - 1; i >= 0; i--) if (points[i][1] !== null) return points[i];
    return null;
  }

  // An axis for swept parameter `p`: log or linear for numbers, one category per value otherwise.
  function paramAxis(p, extra) {
    return axisStyle(merge(p.numeric ? { type: p.log ? 'log' : 'value', scale: true,
                                         axisLabel: { color: MUTED, formatter: function (v) { return fmtNum(v, 3); } } }
                                     : { type: 'category', data: p.values.map(fmtShort) }, extra));
  }
  // Trial i's value of swept parameter k, as its axis (paramAxis) places it.
  function paramAt(k, i) { return params[k].numeric ? trials[i].p[k] : fmtShort(trials[i].p[k]); }

  // When the two axes' values do not form a grid (random draws), a heatmap would be mostly empty
  // cells: every trial is a point at its two values instead, coloured by the rank of its metric
  // as the heatmap's cells are; the winner is the pin.
  function drawTrialScatter() {
    if (!py) {
      setTitle('heatmap', metric + ' by ' + px.label);
      showEmpty('heatmap', 'One parameter was swept: the slice plot below shows every trial against it.');
      return;
    }
    var kx = params.indexOf(px), ky = params.indexOf(py), shown = [];
    trials.forEach(function (t, i) { if (t.best !== null && t.p[kx] !== null && t.p[ky] !== null) shown.push(i); });
    setTitle('heatmap', metric + ' by ' + px.label + ' × ' + py.label);
    if (!shown.length) { showEmpty('heatmap', 'No trial has reported a finite ' + metric + ' yet.'); return; }
    setNote('heatmap', 'One point per trial (the values do not form a grid). ' + (dark ? 'Brighter' : 'Darker') +
            ' is better (colour by rank); the winner is the pin.');
    var pos = rankPositions(shown.map(function (i) { return trials[i].best; }));
    var series = [{
      type: 'scatter', symbolSize: 12,
      data: shown.map(function (i, n) {
        return { value: [paramAt(kx, i), paramAt(ky, i)], trial: i,
                 itemStyle: { color: paletteAt(SEQUENTIAL, pos[n]), borderColor: MUTED, borderWidth: 0.5 } };
      })
    }];
    if (best !== null && shown.indexOf(best) >= 0)
      series.push({ type: 'scatter', name: 'best', data: [{ value: [paramAt(kx, best), paramAt(ky, best)], trial: best }],
                    symbol: 'pin', symbolSize: 30, itemStyle: { color: BEST }, z: 10 });
    draw('heatmap', {
      tooltip: merge(BASE.tooltip, { trigger: 'item', formatter: function (p) { return trialTooltip(p.data.trial); } }),
      grid: { left: 80, right: 24, top: 16, bottom: 56 },
      xAxis: paramAxis(px, { name: px.label, nameLocation: 'middle', nameGap: 30 }),
      yAxis: paramAxis(py, sideName(py.label, 56)),
      series: series
    });
  }

  // Slice plots (Optuna's plot_slice) for a sweep that is not a grid: the metric against each
  // swept parameter, every trial a point; no lines, since the points are independent draws and
  // not steps along an axis. Log axes where the values are log-distributed.
  function drawSlices() {
    var shown = params.slice(0, 6), n = shown.length, cols = Math.min(n, 3), rows = Math.ceil(n / cols);
    setTitle('vs-param', metric + ' against each parameter');
    if (!trials.some(function (t) { return t.best !== null; })) {
      showEmpty('vs-param', 'No trial has reported a finite ' + metric + ' yet.');
      return;
    }
    setNote('vs-param', 'One point per trial' + (params.length > n ? ' (the first ' + n + ' of ' + params.length + ' parameters)' : '') +
            '; the winner is the large marker.');
    var grids = [], xAxes = [], yAxes = [], series = [];
    shown.forEach(function (p, k) {
      var col = k % cols, row = Math.floor(k / cols);
      grids.push({ left: (col * 100 / cols + 8) + '%', width: (100 / cols - 11) + '%',
                   top: (row * 100 / rows + 5) + '%', height: (100 / rows - 20) + '%' });
      xAxes.push(paramAxis(p, { gridIndex: k, name: p.label, nameLocation: 'middle', nameGap: 26 }));
      yAxes.push(axisStyle({ type: 'value', scale: true, gridIndex: k, name: col === 0 ? metric : '',
                             nameLocation: 'middle', nameGap: 44, nameRotate: 90 }));
      var points = [];
      trials.forEach(function (t, i) {
        if (t.best === null || t.p[k] === null) return;
        var item = { value: [paramAt(k, i), t.best], trial: i };
        if (i === best) { item.itemStyle = { color: BEST }; item.symbolSize = 16; }
        points.push(item);
      });
      series.push({ type: 'scatter', xAxisIndex: k, yAxisIndex: k, data: points, symbolSize: 8,
                    itemStyle: { color: PLASMA[1], opacity: 0.8 } });
    });
    draw('vs-param', {
      tooltip: merge(BASE.tooltip, { trigger: 'item', formatter: function (p) { return trialTooltip(p.data.trial); } }),
      grid: grids, xAxis: xAxes, yAxis: yAxes, series: series
    });
  }

  // ---- heatmap: metric by x param x y param -------------------------------------------------
  section('heatmap', function () {
    if (!px) {
      setTitle('heatmap', metric + ' by parameter');
      showEmpty('heatmap', trials.length ? 'This sweep varies no parameter, so there is no map to draw: every trial ran the same settings.' : 'No trials yet.');
      return;
    }
    if (!data.charts.heatmap) { drawTrialScatter(); return; }
    if (!data.heat.length) {
      showEmpty('heatmap', 'No trial has reported a finite ' + metric + ' yet.');
      return;
    }
    var values = data.heat.map(function (h) { return h[2]; });
    var pos = rankPositions(values);
    var cellColor = data.heat.map(function (h, i) { return paletteAt(SEQUENTIAL, pos[i]); });
    function cellTooltip(h) {
      var extra = '';
      if (h[4] > 1) extra = 'best of ' + h[4] + ' trials in this cell';
      return trialTooltip(h[3], extra);
    }
    if (!py) {
      setTitle('heatmap', metric + ' by ' + px.label);
      setNote('heatmap', 'Best trial for each ' + px.label + '; the winner is outlined.');
      draw('heatmap', {
        tooltip: merge(BASE.tooltip, { formatter: function (p) { return cellTooltip(data.heat[p.dataIndex]); } }),
        grid: { left: 70, right: 24, top: 20, bottom: 56 },
        xAxis: axisStyle({ type: 'category', data: px.values.map(fmtShort), name: px.label, nameLocation: 'middle', nameGap: 40,
                           axisLabel: { color: MUTED, interval: 0, rotate: px.values.length > 6 ? 30 : 0 } }),
        yAxis: axisStyle(merge(sideName(metric), { type: 'value', scale: true })),
        series: [{
          type: 'bar',
          data: data.heat.map(function (h, i) {
            return { value: [h[0], h[2]], itemStyle: { color: cellColor[i], borderColor: i === data.bestCell ? BEST : undefined, borderWidth: i === data.bestCell ? 3 : 0 } };
          }),
          label: { show: data.heat.length <= 24, position: 'top', color: TEXT, formatter: function (p) { return fmtNum(p.value[1]); } }
        }]
      });
      return;
    }
    setTitle('heatmap', metric + ' by ' + px.label + ' × ' + py.label);
    setNote('heatmap', 'Each cell is the best trial with those values (other swept parameters are in the tooltip). ' +
            (dark ? 'Brighter' : 'Darker') + ' is better (colour by rank); the winner is outlined.');
    draw('heatmap', {
      tooltip: merge(BASE.tooltip, { formatter: function (p) { return cellTooltip(data.heat[p.dataIndex]); } }),
      grid: { left: 80, right: 24, top: 16, bottom: px.values.length > 6 ? 72 : 56 },
      xAxis: axisStyle({ type: 'category', data: px.values.map(fmtShort), name: px.label, nameLocation: 'middle',
                         nameGap: px.values.length > 6 ? 44 : 30, splitArea: { show: true },
                         axisLabel: { color: MUTED, interval: 0, rotate: px.values.length > 6 ? 30 : 0 } }),
      yAxis: axisStyle({ type: 'category', data: py.values.map(fmtShort), name: py.label, nameLocation: 'middle', nameGap: 56,
                         splitArea: { show: true }, axisLabel: { color: MUTED, interval: 0 } }),
      series: [{
        type: 'heatmap',
        data: data.heat.map(function (h, i) {
          var item = { value: [h[0], h[1], h[2]], itemStyle: { color: cellColor[i] }, label: { color: textOn(cellColor[i]) } };
          if (i === data.bestCell) {
            item.itemStyle.borderColor = BEST;
            item.itemStyle.borderWidth = 4;
            item.label.fontWeight = 700;
          }
          return item;
        }),
        label: {
          show: data.heat.length <= 160, fontSize: 12,
          formatter: function (p) { return fmtNum(p.value[2], 3); }
        },
        emphasis: { itemStyle: { shadowBlur: 8, shadowColor: 'rgba(0,0,0,.3)' } }
      }]
    });
  });

  // ---- metric against the x parameter, one line per y value ---------------------------------
  section('vs-param', function () {
    if (!px) {
      setTitle('vs-param', metric + ' against a parameter');
      showEmpty('vs-param', trials.length ? 'No parameter was swept.' : 'No trials yet.');
      return;
    }
    if (data.charts.slices) { drawSlices(); return; }
    setTitle('vs-param', metric + ' against ' + px.label + (px.log ? ' (log axis)' : ''));
    setNote('vs-param', py ? 'Best trial per point, one line per ' + py.label + '. The winner is the large marker.'
                           : 'Best trial per ' + px.label + '. The winner is the large marker.');
    if (!data.heat.length) { showEmpty('vs-param', 'No trial has reported a finite ' + metric + ' yet.'); return; }
    var byLine = {};
    data.heat.forEach(function (h) { (byLine[h[1]] = byLine[h[1]] || []).push(h); });
    var xOf = function (h) { return px.numeric ? px.values[h[0]] : fmtShort(px.values[h[0]]); };
    var series = Object.keys(byLine).map(Number).sort(function (a, b) { return a - b; }).map(function (yi) {
      var cells = byLine[yi].slice().sort(function (a, b) { return a[0] - b[0]; });
      return {
        type: 'line', name: py ? py.label + ' ' + fmtShort(py.values[yi]) : metric,
        data: cells.map(function (h) { return { value: [xOf(h), h[2]], cell: h }; }),
        symbolSize: 7, lineStyle: { width: 2 }, emphasis: { focus: 'series' }
      };
    });
    if (data.bestCell !== null) {
      var bh = data.heat[data.bestCell];
      series.push({
        type: 'scatter', name: 'best', data: [{ value: [xOf(bh), bh[2]], cell: bh }], symbol: 'pin', symbolSize: 30,
        itemStyle: { color: BEST }, z: 10
      });
    }
    draw('vs-param', {
      tooltip: merge(BASE.tooltip, { trigger: 'item', formatter: function (p) { return trialTooltip(p.data.cell[3]); } }),
      legend: { type: 'scroll', top: 0, textStyle: { color: TEXT } },
      grid: { left: 64, right: 24, top: 40, bottom: 50 },
      xAxis: axisStyle(px.numeric ? { type: px.log ? 'log' : 'value', scale: true, min: 'dataMin', max: 'dataMax', name: px.label, nameLocation: 'middle', nameGap: 30,
                                      axisLabel: { color: MUTED, formatter: function (v) { return fmtNum(v, 3); } } }
                                  : { type: 'category', data: px.values.map(fmtShort), name: px.label, nameLocation: 'middle', nameGap: 30 }),
      yAxis: axisStyle(merge(sideName(metric), { type: 'value', scale: true })),
      series: series
    });
  });

  // ---- history: each finished trial's value by trial number, and the best so far -----------
  // Optuna's optimisation history, for every method. The value of a trial is its score (t.best,
  // what the best-trial card and the table rank by) and the best-so-far steps come from the
  // payload (report_model.h: trial_history). A finished trial with no finite value (failed or
  // diverged before its first one) is a cross on the worst edge, below (maximize) or above
  // (minimize) every value, never left out. SVG below 2,000 trials, canvas above.
  var HISTORY_STATES = ['completed', 'stopped_early', 'failed', 'diverged', 'cancelled'];
  // Completed trials in the slice plots' colour: the state's green would read as the best line.
  function historyColor(state) { return state === 'completed' ? PLASMA[1] : STATE_COLOR[state] || MUTED; }
  var CROSS = 'path://M2,0 L5,3 L8,0 L10,2 L7,5 L10,8 L8,10 L5,7 L2,10 L0,8 L3,5 L0,2 Z';
  section('history', function () {
    var hist = data.history;
    if (!hist.length) { showEmpty('history', trials.length ? 'No trial has finished yet.' : 'No trials yet.'); return; }
    var values = [], missing = [];
    hist.forEach(function (h) { (trials[h[0]].best !== null ? values : missing).push(h); });
    if (!values.length) {
      showEmpty('history', 'None of the ' + hist.length + ' finished trials has a finite ' + metric +
                ' (' + missing.map(function (h) { return '#' + trials[h[0]].n + ' ' + trials[h[0]].state.replace('_', ' '); }).join(', ') + ').');
      return;
    }
    var ys = values.map(function (h) { return trials[h[0]].best; });
    var lo = Math.min.apply(null, ys), hi = Math.max.apply(null, ys);
    var span = hi - lo || Math.abs(hi) || 1;
    var edge = maximize ? lo - 0.08 * span : hi + 0.08 * span;
    var running = trials.length - hist.length, big = hist.length <= 100;
    setNote('history', 'Each finished trial\'s ' + metric + ' (its best epoch), coloured by its state; the green steps are the best so far (' +
            (maximize ? 'highest' : 'lowest') + ').' +
            (missing.length ? ' ' + missing.length + (missing.length === 1 ? ' trial' : ' trials') + ' without a finite value: the crosses along the ' + (maximize ? 'bottom' : 'top') + '.' : '') +
            (running ? ' ' + running + ' not finished, not shown.' : ''));
    var series = [], legend = [];
    HISTORY_STATES.forEach(function (s) {
      var points = values.filter(function (h) { return trials[h[0]].state === s; }).map(function (h) {
        var i = h[0], item = { value: [trials[i].n, trials[i].best], trial: i };
        if (i === best) { item.symbolSize = big ? 14 : 10; item.itemStyle = { borderColor: BEST, borderWidth: 3 }; }
        return item;
      });
      if (!points.length) return;
      var name = s.replace('_', ' ');
      legend.push(name);
      series.push({ type: 'scatter', id: 'state-' + s, name: name, data: points, symbolSize: big ? 8 : 5,
                    itemStyle: { color: historyColor(s), opacity: 0.85 }, z: 4 });
    });
    if (missing.length) {
      legend.push('no finite value');
      series.push({ type: 'scatter', id: 'no-value', name: 'no finite value', symbol: CROSS, symbolSize: 11, z: 4,
                    itemStyle: { color: MUTED },  // the legend's; each cross has its state's colour
                    data: missing.map(function (h) {
                      return { value: [trials[h[0]].n, edge], trial: h[0], itemStyle: { color: historyColor(trials[h[0]].state) } };
                    }) });
    }
    legend.push('best so far');
    series.push({ type: 'line', id: 'best-so-far', name: 'best so far', step: 'end', showSymbol: false, z: 3,
                  itemStyle: { color: BEST }, lineStyle: { width: 2.5, color: BEST },
                  data: hist.filter(function (h) { return h[1] !== null; }).map(function (h) {
                    return { value: [trials[h[0]].n, h[1]], trial: h[0] };
                  }) });
    var seriesById = {};
    series.forEach(function (s) { seriesById[s.id] = s; });
    draw('history', {
      tooltip: merge(BASE.tooltip, {
        trigger: 'item',
        formatter: function (p) {
          var s = seriesById[p.seriesId], i = p.data.trial, t = trials[i];
          if (s.type === 'line') return 'best so far after ' + esc(trialTitle(i)) + ': <b>' + esc(fmtNum(p.data.value[1], 5)) + '</b>';
          var extra = 'final ' + esc(metric) + ': ' + esc(t.final !== null ? fmtNum(t.final, 5) : kindText(t.finalKind));
          if (s.id === 'no-value') extra = 'no finite ' + esc(metric) + ' (' + esc(t.state.replace('_', ' ')) + ')';
          return trialTooltip(i, extra);
        }
      }),
      legend: { top: 0, data: legend, textStyle: { color: TEXT } },
      grid: { left: 64, right: 24, top: 36, bottom: big ? 40 : 62 },
      xAxis: axisStyle({ type: 'value', name: 'trial', nameLocation: 'middle', nameGap: 24, min: 'dataMin', max: 'dataMax', minInterval: 1 }),
      yAxis: axisStyle(merge(sideName(metric), { type: 'value', scale: true,
                                                 axisLabel: { color: MUTED, formatter: function (v) { return fmtNum(v, 3); } } })),
      dataZoom: big ? [] : [{ type: 'inside', xAxisIndex: 0 }, { type: 'slider', xAxisIndex: 0, height: 16, bottom: 6 }],
      series: series
    }, trials.length > 2000 ? 'canvas' : 'svg');
  });

  // ---- parameter importance -----------------------------------------------------------------
  // Computed in C++ (report_model.h: parameter_importance): a random forest's share per swept
  // parameter, most important on top, and the Spearman correlation beside each bar.
  var MAX_IMPORTANCE_BARS = 20;
  function signed(v) { return v === null ? '–' : (v > 0 ? '+' : v < 0 ? '−' : '') + Math.abs(v).toFixed(2); }
  section('importance', function () {
    var imp = data.importance;
    if (!imp.rows.length) { showEmpty('importance', imp.reason || 'Not enough trials to rank the parameters.'); return; }
    var rows = imp.rows.slice(0, MAX_IMPORTANCE_BARS), fitted = imp.completed + imp.stoppedEarly;
    var labelCount = {};
    params.forEach(function (p) { labelCount[p.label] = (labelCount[p.label] || 0) + 1; });
    function labelOf(k) { return labelCount[params[k].label] > 1 ? params[k].name : params[k].label; }
    setNote('importance', 'Random forest (64 trees) of ' + metric + ' on the swept parameters, ' + fitted + ' trials (' +
            imp.completed + ' completed' + (imp.stoppedEarly ? ', ' + imp.stoppedEarly + ' stopped early at their best value' : '') +
            '). Bar: the parameter\'s share of the fit (the bars sum to 1); ρ: Spearman correlation with ' + metric + ' (– for categories).' +
            (imp.rows.length > rows.length ? ' The ' + rows.length + ' most important of ' + imp.rows.length + '.' : ''));
    draw('importance', {
      tooltip: merge(BASE.tooltip, {
        trigger: 'item',
        formatter: function (p) {
          var r = p.data.row, prm = params[r[0]];
          return '<b>' + esc(prm.name) + '</b><br>importance <b>' + esc(fmtNum(r[1], 3)) + '</b><br>Spearman ρ with ' + esc(metric) + ': <b>' +
                 esc(r[2] === null ? (prm.numeric ? 'undefined (constant)' : '– (categorical)') : signed(r[2])) + '</b>' +
                 (prm.numeric ? (prm.log ? '<br>log-scaled values' : '') : '<br>categorical: one-hot encoded');
        }
      }),
      grid: { left: 16, right: 96, top: 8, bottom: 28, containLabel: true },
      xAxis: axisStyle({ type: 'value', min: 0, max: function (v) { return Math.min(1, Math.ceil(v.max * 10) / 10 || 1); },
                         axisLabel: { color: MUTED, formatter: function (v) { return fmtNum(v, 2); } } }),
      yAxis: axisStyle({ type: 'category', inverse: true, data: rows.map(function (r) { return labelOf(r[0]); }),
                         axisLabel: { color: TEXT, formatter: function (v) { return v.length > 28 ? v.slice(0, 27) + '…' : v; } } }),
      series: [{
        type: 'bar', barMaxWidth: 22, itemStyle: { color: PLASMA[1] },
        data: rows.map(function (r) { return { value: r[1], row: r }; }),
        label: { show: true, position: 'right', color: TEXT,
                 formatter: function (p) { return fmtNum(p.data.row[1], 2) + '   ρ ' + signed(p.data.row[2]); } }
      }]
    }, 'svg');
  });

  // ---- learning curves ----------------------------------------------------------------------
  var MARKS = {
    stopped_early: { name: 'stopped early', symbol: 'triangle', color: STATE_COLOR.stopped_early },
    diverged: { name: 'diverged', symbol: 'path://M2,0 L5,3 L8,0 L10,2 L7,5 L10,8 L8,10 L5,7 L2,10 L0,8 L3,5 L0,2 Z', color: STATE_COLOR.diverged },
    failed: { name: 'failed', symbol: 'rect', color: STATE_COLOR.failed },
    cancelled: { name: 'cancelled', symbol: 'diamond', color: STATE_COLOR.cancelled }
  };
  function endNote(i, which) {
    var t = trials[i], nf = curves[i].nonfinite;
    var text = t.state.replace('_', ' ');
    if (nf) text += ': ' + nf.metric + ' became ' + kindText(nf.kind) + ' at epoch ' + fmtNum(nf.epoch);
    if (t.stop) text += ' — ' + t.stop;
    if (t.error) text += ' — ' + t.error;
    return esc(text) + ' (' + esc(which) + ')';
  }
  function drawCurves(id, key, yName, isLoss) {
    var series = [], markData = {}, hasAny = false, yMin = Infinity, yMax = -Infinity;
    Object.keys(MARKS).forEach(function (s) { markData[s] = []; });
    trials.forEach(function (t, i) {
      var c = curves[i][key];
      if (!c) return;
      var pts = curvePoints(c);
      if (!pts.length) return;
      pts.forEach(function (p) { if (p[1] !== null) { hasAny = true; yMin = Math.min(yMin, p[1]); yMax = Math.max(yMax, p[1]); } });
      var g = groups.list[groups.of(i)];
      var isBest = i === best;
      series.push({
        type: 'line', id: 'trial-' + t.id, name: isBest ? 'best: trial #' + t.n : g.label, trial: i, data: pts,
        showSymbol: isBest || !many, symbolSize: isBest ? 5 : 3, triggerLineEvent: true,
        itemStyle: { color: isBest ? BEST : g.color },
        lineStyle: { width: isBest ? 3.5 : 1.3, opacity: isBest ? 1 : (many ? 0.35 : 0.7) },
        emphasis: { focus: 'series', lineStyle: { width: isBest ? 4 : 2.5, opacity: 1 } },
        z: isBest ? 10 : 2
      });
      if (MARKS[t.state]) {
        var end = lastFinite(pts);
        if (end) markData[t.state].push({ value: [end[0], end[1]], trial: i });
      }
    });
    if (!hasAny) {
      showEmpty(id, trials.length ? 'No trial has reported a finite ' + yName + ' yet.' : 'No trials yet.');
      return;
    }
    Object.keys(MARKS).forEach(function (s) {
      if (!markData[s].length) return;
      series.push({
        type: 'scatter', id: 'mark-' + s, name: MARKS[s].name, data: markData[s], symbol: MARKS[s].symbol, symbolSize: 13,
        itemStyle: { color: MARKS[s].color, borderColor: '#ffffff', borderWidth: 1 }, z: 20
      });
    });
    var legend = groups.list.map(function (g) { return g.label; });
    if (best !== null && curves[best][key]) legend.push('best: trial #' + trials[best].n);
    Object.keys(MARKS).forEach(function (s) { if (markData[s].length) legend.push(MARKS[s].name); });
    var useLog = isLoss && yMin > 0 && yMax / yMin > 30;
    var seriesById = {};
    series.forEach(function (s) { seriesById[s.id] = s; });
    draw(id, {
      tooltip: merge(BASE.tooltip, {
        trigger: 'item',
        formatter: function (p) {
          // By id, not index: after a live update the chart's series indices need not be ours.
          var s = seriesById[p.seriesId];
          if (s.type === 'scatter') {
            var d = p.data;
            return trialTooltip(d.trial, endNote(d.trial, 'epoch ' + fmtNum(d.value[0]) + ', ' + yName + ' ' + fmtNum(d.value[1])));
          }
          var extra = '';
          if (p.data && p.data.length === 2) extra = 'epoch ' + esc(fmtNum(p.data[0])) + ': ' + esc(yName) + ' ' + esc(fmtNum(p.data[1]));
          return trialTooltip(s.trial, extra);
        }
      }),
      legend: { type: 'scroll', top: 0, data: legend, textStyle: { color: TEXT } },
      grid: { left: 64, right: 28, top: 40, bottom: 62 },
      xAxis: axisStyle({ type: 'value', name: 'epoch', nameLocation: 'middle', nameGap: 26, min: 0 }),
      yAxis: axisStyle(merge(sideName(yName, useLog ? 40 : 48), { type: useLog ? 'log' : 'value', scale: true })),
      dataZoom: [{ type: 'inside', xAxisIndex: 0 }, { type: 'slider', xAxisIndex: 0, height: 16, bottom: 6 }],
      series: series
    });
  }
  section('curves-metric', function () {
    setTitle('curves-metric', 'Learning curves: ' + metric);
    setNote('curves-metric', 'Every trial, coloured by ' + (px ? px.label : 'trial') +
            '; the best trial is the thick green line. Markers show where early-stopped, diverged and failed runs ended.');
    drawCurves('curves-metric', 'm', metric, /loss/.test(metric));
  });
  section('curves-loss', function () {
    if (!lossName) { showEmpty('curves-loss', 'No trial reported a training loss (train_loss).'); return; }
    setTitle('curves-loss', 'Learning curves: ' + lossName);
    drawCurves('curves-loss', 'l', lossName, true);
  });

  // ---- parallel coordinates -----------------------------------------------------------------
  section('parallel', function () {
    if (!params.length) { showEmpty('parallel', trials.length ? 'No parameter was swept.' : 'No trials yet.'); return; }
    var rows = [], bestRow = null;
    trials.forEach(function (t, i) {
      if (t.best === null) return;
      var ok = true;
      var row = t.p.map(function (v, k) { if (v === null) ok = false; return params[k].numeric ? v : fmtShort(v); });
      if (!ok) return;
      row.push(t.best);
      row.trial = i;
      rows.push(row);
      if (i === best) bestRow = row;
    });
    if (!rows.length) { showEmpty('parallel', 'No trial has reported a finite ' + metric + ' yet.'); return; }
    var axes = params.map(function (p, k) {
      var axis = { dim: k, name: p.label };
      if (p.numeric) { axis.type = p.log ? 'log' : 'value'; axis.scale = true; }
      else { axis.type = 'category'; axis.data = p.values.map(fmtShort); }
      return axis;
    });
    axes.push({ dim: params.length, name: metric, type: 'value', scale: true, nameTextStyle: { fontWeight: 700, color: TEXT } });
    var scores = rows.map(function (r) { return r[params.length]; });
    var lo = Math.min.apply(null, scores), hi = Math.max.apply(null, scores);
    var series = [{
      type: 'parallel', name: 'trials', lineStyle: { width: 1.4, opacity: many ? 0.35 : 0.75 },
      data: rows.map(function (r) { return { value: r.slice(), trial: r.trial }; })
    }];
    if (bestRow) series.push({ type: 'parallel', name: 'best', lineStyle: { width: 4, opacity: 1, color: BEST }, data: [{ value: bestRow.slice(), trial: bestRow.trial }], z: 10 });
    draw('parallel', {
      tooltip: merge(BASE.tooltip, { trigger: 'item', formatter: function (p) { return trialTooltip(p.data.trial); } }),
      parallel: {
        left: 70, right: 120, top: 40, bottom: 30,
        parallelAxisDefault: {
          nameTextStyle: { color: TEXT, fontWeight: 600 }, axisLine: { lineStyle: { color: MUTED } },
          axisLabel: { color: MUTED, formatter: function (v) {
            if (typeof v === 'number') return fmtNum(v, 3);
            v = String(v);
            return v.length > 22 ? v.slice(0, 21) + '…' : v;
          } }
        }
      },
      parallelAxis: axes,
      visualMap: {
        seriesIndex: 0, dimension: params.length, min: lo, max: hi === lo ? lo + 1e-9 : hi, calculable: true, right: 8, top: 'middle',
        itemHeight: 200, precision: 4, textStyle: { color: MUTED },
        inRange: { color: maximize ? PLASMA.slice().reverse() : PLASMA }, text: [maximize ? 'better' : 'worse', maximize ? 'worse' : 'better']
      },
      series: series
    });
  });

  // ---- confusion matrix of the best trial ---------------------------------------------------
  section('confusion', function () {
    var conf = data.confusion;
    if (!conf) {
      showEmpty('confusion', best === null ? 'No best trial yet.' : 'The best trial recorded no confusion matrix.');
      return;
    }
    setTitle('confusion', 'Confusion matrix of the best trial (#' + trials[conf.trial].n + ')');
    var labels = conf.labels, m = conf.matrix, cells = [];
    var total = 0, correct = 0;
    m.forEach(function (row, r) {
      var sum = row.reduce(function (a, b) { return a + b; }, 0);
      total += sum; correct += row[r];
      row.forEach(function (v, c) { cells.push([c, r, sum ? v / sum : 0, v]); });
    });
    if (total) setNote('confusion', 'Rows: true class, columns: predicted; colour is the share of the row. Accuracy ' + fmtNum(correct / total) + ' on ' + total + ' images.');
    var big = labels.length <= 20;
    draw('confusion', {
      tooltip: merge(BASE.tooltip, {
        formatter: function (p) {
          var d = p.value;
          return 'true <b>' + esc(labels[d[1]]) + '</b>, predicted <b>' + esc(labels[d[0]]) + '</b><br>' +
                 esc(fmtVal(d[3])) + ' images (' + esc((100 * d[2]).toFixed(1)) + '% of the row)';
        }
      }),
      grid: { left: 96, right: 16, top: 8, bottom: 84 },
      xAxis: axisStyle({ type: 'category', data: labels, name: 'predicted', nameLocation: 'middle', nameGap: 68,
                         axisLabel: { color: MUTED, rotate: 35, interval: 0 } }),
      yAxis: axisStyle({ type: 'category', data: labels, inverse: true, name: 'true', nameLocation: 'middle', nameGap: 84,
                         axisLabel: { color: MUTED, interval: 0 } }),
      series: [{
        type: 'heatmap',
        data: cells.map(function (c) {
          var color = paletteAt(CONFUSION, Math.sqrt(c[2]));  // sqrt: small confusions still show
          return { value: c, itemStyle: { color: color }, label: { color: textOn(color) } };
        }),
        label: { show: big, fontSize: 11, formatter: function (p) { return String(p.value[3]); } }
      }]
    });
  });

  // ---- time per trial -----------------------------------------------------------------------
  section('time', function () {
    var rows = [];
    trials.forEach(function (t, i) { if (t.time !== null) rows.push(i); });
    if (!rows.length) { showEmpty('time', trials.length ? 'No trial has finished yet.' : 'No trials yet.'); return; }
    var total = rows.reduce(function (a, i) { return a + trials[i].time; }, 0);
    setNote('time', 'Wall-clock time of each trial, coloured by final state; ' + fmtSeconds(total) + ' in all.');
    draw('time', {
      tooltip: merge(BASE.tooltip, {
        trigger: 'item',
        formatter: function (p) {
          var t = trials[p.data.trial];
          return trialTooltip(p.data.trial, esc(fmtSeconds(t.time)) + (t.epochs !== null ? ', ' + esc(fmtNum(t.epochs)) + ' epochs' : '') +
                              (t.ips !== null ? ', ' + esc(fmtNum(t.ips, 4)) + ' images/s' : ''));
        }
      }),
      grid: { left: 64, right: 16, top: 16, bottom: rows.length > 40 ? 56 : 36 },
      xAxis: axisStyle({ type: 'category', data: rows.map(function (i) { return '#' + trials[i].n; }), name: 'trial', nameLocation: 'middle', nameGap: 24 }),
      yAxis: axisStyle(merge(sideName('seconds'), { type: 'value' })),
      dataZoom: rows.length > 40 ? [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 6 }] : [],
      series: [{
        type: 'bar', barMaxWidth: 28,
        data: rows.map(function (i) {
          return { value: trials[i].time, trial: i, itemStyle: { color: STATE_COLOR[trials[i].state] || MUTED, borderColor: i === best ? BEST : undefined, borderWidth: i === best ? 2 : 0 } };
        })
      }]
    });
  });

  // ---- the table of every trial -------------------------------------------------------------
  // The head, the filter box and the state menu are made once; each render refills the rows and
  // applies the reader's current sort and filter to them.
  var table = null;
  function tableColumns() {
    var columns = [
      { label: '#', get: function (t) { return t.n; }, num: true },
      { label: 'state', get: function (t) { return t.state; }, chip: true }
    ];
    params.forEach(function (p, k) {
      columns.push({ label: p.label, title: p.name, get: function (t) { return t.p[k]; }, num: p.numeric, fmt: fmtVal });
    });
    columns.push(
      { label: 'best ' + metric, get: function (t) { return t.best; }, num: true, fmt: function (v) { return fmtNum(v, 5); } },
      { label: 'at epoch', get: function (t) { return t.bestEpoch; }, num: true },
      { label: 'final ' + metric, get: function (t) { return t.final; }, kind: function (t) { return t.finalKind; }, num: true, fmt: function (v) { return fmtNum(v, 5); } });
    if (lossName) columns.push({ label: 'final ' + lossName, get: function (t) { return t.loss; }, kind: function (t) { return t.lossKind; }, num: true, fmt: function (v) { return fmtNum(v, 4); } });
    columns.push(
      { label: 'epochs', get: function (t) { return t.epochs; }, num: true },
      { label: 'time', get: function (t) { return t.time; }, num: true, fmt: fmtSeconds },
      { label: 'images/s', get: function (t) { return t.ips; }, num: true, fmt: function (v) { return fmtNum(v, 4); } },
      { label: 'device', get: function (t) { return t.device; } },
      { label: 'stop reason / error', get: function (t) { return [t.stop, t.error].filter(Boolean).join(' — '); }, text: true });
    return columns;
  }
  function makeTable() {
    var el = document.getElementById('trials-table');
    var t = {
      thead: el.tHead, tbody: el.tBodies[0], headRow: null, columns: [], rows: [], labels: null,
      sort: { label: null, dir: 1 },  // the sorted column by label, so it survives new columns
      filterInput: document.getElementById('trial-filter'),
      stateSelect: document.getElementById('state-filter'),
      counter: document.getElementById('trial-count')
    };
    t.filterInput.addEventListener('input', function () { applyFilter(t); });
    t.stateSelect.addEventListener('change', function () { applyFilter(t); });
    return t;
  }
  function sortBy(t, ci) {
    var c = t.columns[ci];
    t.sort.dir = t.sort.label === c.label ? -t.sort.dir : (c.num && c.label.indexOf('best') === 0 && maximize ? -1 : 1);
    t.sort.label = c.label;
    applySort(t);
  }
  function applySort(t) {
    var ci = -1;
    t.columns.forEach(function (c, k) { if (c.label === t.sort.label) ci = k; });
    Array.prototype.forEach.call(t.headRow.children, function (th, k) {
      th.className = k === ci ? (t.sort.dir > 0 ? 'sorted-asc' : 'sorted-desc') : '';
    });
    if (ci < 0) return;
    var c = t.columns[ci], dir = t.sort.dir;
    t.rows.sort(function (a, b) {
      var va = c.get(a.trial), vb = c.get(b.trial);
      var na = va === null || va === undefined || va === '', nb = vb === null || vb === undefined || vb === '';
      if (na || nb) return na === nb ? a.index - b.index : (na ? 1 : -1);  // blanks last, both ways
      if (typeof va === 'number' && typeof vb === 'number') return (va - vb) * dir || a.index - b.index;
      return String(fmtVal(va)).localeCompare(String(fmtVal(vb)), undefined, { numeric: true }) * dir || a.index - b.index;
    });
    t.rows.forEach(function (r) { t.tbody.appendChild(r.tr); });
  }
  function applyFilter(t) {
    var tokens = t.filterInput.value.toLowerCase().split(/\s+/).filter(Boolean);
    var state = t.stateSelect.value, shown = 0;
    t.rows.forEach(function (r) {
      var ok = !state || r.trial.state === state;
      for (var k = 0; ok && k < tokens.length; k++) {
        var tok = tokens[k], eq = tok.indexOf('=');
        if (eq > 0) {
          var key = tok.slice(0, eq), want = tok.slice(eq + 1);
          ok = t.columns.some(function (c, ci) {
            var name = (c.title || c.label).toLowerCase();
            return (name === key || c.label.toLowerCase() === key || name.endsWith('.' + key)) && r.cells[ci].toLowerCase() === want;
          });
        } else {
          ok = r.search.indexOf(tok) >= 0;
        }
      }
      r.tr.hidden = !ok;
      if (ok) shown++;
    });
    t.counter.textContent = shown === t.rows.length ? t.rows.length + ' trials' : 'showing ' + shown + ' of ' + t.rows.length;
  }
  section('table', function () {
    var t = table || (table = makeTable());
    var columns = t.columns = tableColumns();
    var labels = columns.map(function (c) { return c.label; }).join('\u0000');
    if (labels !== t.labels) {
      t.labels = labels;
      t.thead.textContent = '';
      t.headRow = document.createElement('tr');
      columns.forEach(function (c, ci) {
        var th = document.createElement('th');
        th.textContent = c.label;
        if (c.title) th.title = c.title;
        th.addEventListener('click', function () { sortBy(t, ci); });
        t.headRow.appendChild(th);
      });
      t.thead.appendChild(t.headRow);
    }

    t.tbody.textContent = '';
    t.rows = trials.map(function (trial, i) {
      var tr = document.createElement('tr');
      if (i === best) tr.className = 'best-row';
      var texts = [];
      columns.forEach(function (c) {
        var td = document.createElement('td');
        var v = c.get(trial), text;
        if (v === null && c.kind && c.kind(trial)) text = kindText(c.kind(trial));
        else text = c.fmt ? c.fmt(v) : (v === null || v === undefined || v === '' ? (c.text ? '' : '–') : String(v));
        if (c.chip) {
          var chip = document.createElement('span');
          chip.className = 'chip state-' + v;
          chip.textContent = String(v).replace('_', ' ');
          td.appendChild(chip);
        } else {
          td.textContent = text;
        }
        if (c.num) td.className = 'num';
        if (c.text) td.className = 'text';
        tr.appendChild(td);
        texts.push(text);
      });
      t.tbody.appendChild(tr);
      return { tr: tr, trial: trial, index: i, search: texts.join(' ').toLowerCase(), cells: texts };
    });

    // The state menu lists the states there are now, keeping the reader's choice.
    var chosen = t.stateSelect.value;
    while (t.stateSelect.options.length > 1) t.stateSelect.remove(1);
    data.counts.forEach(function (c) {
      var o = document.createElement('option');
      o.value = c[0];
      o.textContent = c[0].replace('_', ' ') + ' (' + c[1] + ')';
      t.stateSelect.appendChild(o);
    });
    if (chosen && !data.counts.some(function (c) { return c[0] === chosen; })) {
      var gone = document.createElement('option');  // nothing in that state any more: 0, kept
      gone.value = chosen;
      gone.textContent = chosen.replace('_', ' ') + ' (0)';
      t.stateSelect.appendChild(gone);
    }
    t.stateSelect.value = chosen;

    if (t.sort.label === null && trials.length) sortBy(t, columns.findIndex(function (c) { return c.label === 'best ' + metric; }));
    else applySort(t);
    applyFilter(t);
  });

  function render(d) {
    setData(d);
    runSections();
    status.flush();
  }

  render(JSON.parse(document.getElementById('report-data').textContent));

  if (checkTooltips) {
    Object.keys(charts).forEach(function (id) {
      var chart = charts[id];
      chart.getOption().series.forEach(function (series, si) {
        // ECharts 5.6 cannot place a parallel series' tooltip by index (it throws); that
        // formatter is trialTooltip, which the other charts exercise.
        if (series.type === 'parallel') return;
        var n = Math.min((series.data || []).length, 40);
        for (var di = 0; di < n; di++) chart.dispatchAction({ type: 'showTip', seriesIndex: si, dataIndex: di });
      });
      chart.dispatchAction({ type: 'hideTip' });
    });
  }

  // For report_live.js: draw newer data into the same charts and table.
  window.__sweepReportView = { render: render, data: function () { return data; } };
  status.done = true;
  status.flush();
})();
