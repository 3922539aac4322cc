/*
 * progress_table.cpp — choosing what fits (rows), then laying it out (columns).
 */
#include "sweep/run/progress_table.h"

#include <algorithm>
#include <cmath>

#include "sweep/run/terminal_text.h"

namespace sweep::run {

namespace {

constexpr std::size_t kGap = 2;  // spaces between columns

// NaN is how the table marks a value not reported yet.
std::string number_cell(double value) { return std::isnan(value) ? "-" : significant(value, 4); }

// "[########............]  40%", or "40%" alone when width is 0.
std::string progress_cell(double fraction, int width) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const std::string percent = std::to_string(static_cast<int>(std::floor(fraction * 100))) + "%";
  if (width == 0) return pad(percent, 4, true);
  const int filled = static_cast<int>(std::lround(fraction * width));
  std::string text(1, '[');
  text.append(static_cast<std::size_t>(filled), '#');
  text.append(static_cast<std::size_t>(width - filled), '.');
  text += ']';
  return text + pad(percent, 5, true);
}

// How the running trials' table gets narrower, step by step, before anything is cut: a shorter
// progress bar, the percentage alone, no device column, no loss column.
struct RunningColumns {
  int bar_width = 20;
  bool device = true, loss = true;
};
constexpr RunningColumns kNarrowing[] = {{20, true, true}, {12, true, true}, {6, true, true},
                                         {0, true, true},  {0, false, true}, {0, false, false}};

std::string param_cell(const Json& params, const std::string& key, const ParamDigits& digits) {
  if (!params.is_object() || !params.contains(key)) return "-";
  const auto d = digits.find(key);
  return printable(value_text(params[key], d == digits.end() ? 0 : d->second));
}

// Columns of cells, each as wide as its widest cell, `kGap` apart, every line cut to `width`.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;  // aligned right (numbers that are counted, not compared)
  std::vector<std::vector<std::string>> rows;

  std::size_t natural_width() const {
    std::size_t total = 0;
    for (std::size_t c = 0; c < header.size(); ++c) total += column_width(c) + (c ? kGap : 0);
    return total;
  }
  std::size_t column_width(std::size_t c) const {
    std::size_t w = display_width(header[c]);
    for (const auto& row : rows) w = std::max(w, display_width(row[c]));
    return w;
  }
  void render(std::size_t width, std::vector<std::string>& lines) const {
    std::vector<std::size_t> widths;
    for (std::size_t c = 0; c < header.size(); ++c) widths.push_back(column_width(c));
    auto line_of = [&](const std::vector<std::string>& cells) {
      std::string line;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (c) line.append(kGap, ' ');
        // The last column is not padded: no trailing spaces to cut.
        line += c + 1 == cells.size() && !right[c] ? cells[c] : pad(cells[c], widths[c], right[c]);
      }
      return fit(line, width);
    };
    lines.push_back(line_of(header));
    for (const auto& row : rows) lines.push_back(line_of(row));
  }
};

void add_param_columns(Table& table, const std::vector<std::string>& keys) {
  for (const std::string& label : param_labels(keys, ParamNames::last_parts)) {
    table.header.push_back(printable(label));
    table.right.push_back(false);
  }
}

Table running_table(const ProgressView& view, const std::vector<const RunningTrial*>& shown,
                    const ParamDigits& digits, RunningColumns columns) {
  Table table;
  auto column = [&](bool wanted, std::string header, bool right) {
    if (!wanted) return;
    table.header.push_back(std::move(header));
    table.right.push_back(right);
  };
  column(true, "running", true);
  column(columns.device, "device", false);
  column(true, "epoch", false);
  column(columns.loss, "loss", false);
  column(true, printable(view.metric_name), false);
  column(true, "progress", false);
  column(true, "ETA", false);
  add_param_columns(table, view.param_keys);
  for (const RunningTrial* t : shown) {
    const double eta =
        t->fraction > 0.01 ? t->seconds * (1 - t->fraction) / t->fraction : kNotReported;
    std::vector<std::string> row = {std::to_string(t->number)};
    if (columns.device) row.push_back(printable(t->device));
    row.push_back(std::to_string(t->epoch));
    if (columns.loss) row.push_back(number_cell(t->loss));
    row.push_back(number_cell(t->metric));
    row.push_back(progress_cell(t->fraction, columns.bar_width));
    row.push_back(duration(eta));
    for (const std::string& key : view.param_keys)
      row.push_back(param_cell(t->params, key, digits));
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table finished_table(const ProgressView& view, const std::vector<const FinishedTrial*>& shown,
                     const ParamDigits& digits) {
  Table table;
  table.header = {"finished", "state", printable(view.metric_name), "time"};
  table.right = {true, false, false, false};
  add_param_columns(table, view.param_keys);
  for (const FinishedTrial* t : shown) {
    std::vector<std::string> row = {std::to_string(t->number), std::string(to_string(t->state)),
                                    number_cell(t->metric), duration(t->seconds)};
    for (const std::string& key : view.param_keys)
      row.push_back(param_cell(t->params, key, digits));
    table.rows.push_back(std::move(row));
  }
  return table;
}

// "sweep NAME: 12 trials | 2 running, 3 completed, 6 queued | elapsed 0m41s", or in two lines
// when that does not fit.
std::vector<std::string> header_lines(const ProgressView& view, std::size_t width) {
  auto count = [&](TrialState s) {
    const auto it = view.states.find(s);
    return it == view.states.end() ? 0 : it->second;
  };
  std::string states = std::to_string(count(TrialState::running)) + " running, " +
                       std::to_string(count(TrialState::completed)) + " completed";
  for (const auto& [state, n] : view.states)
    if (n > 0 && state != TrialState::running && state != TrialState::completed &&
        state != TrialState::queued)
      states += ", " + std::to_string(n) + " " + std::string(to_string(state));
  states += ", " + std::to_string(count(TrialState::queued)) + " queued";
  const std::string name = "sweep " + printable(view.sweep_name) + ": " +
                           std::to_string(view.trials) + (view.trials == 1 ? " trial" : " trials");
  const std::string elapsed = "elapsed " + duration(view.elapsed_seconds);
  const std::string one = name + " | " + states + " | " + elapsed;
  if (display_width(one) <= width) return {one};
  return {fit(name + " | " + elapsed, width), fit(states, width)};
}

std::string best_line(const ProgressView& view, const ParamDigits& digits) {
  if (!view.best) return "best: no trial has reported " + printable(view.metric_name) + " yet";
  return "best: trial " + std::to_string(view.best->number) + ", " + printable(view.metric_name) +
         " " + significant(view.best->value, 4) +
         in_parentheses(printable(params_text(view.best->params, ParamNames::last_parts, digits)));
}

}  // namespace

ParamDigits param_digits(const std::vector<std::string>& keys,
                         const std::vector<const Json*>& params) {
  ParamDigits digits;
  for (const std::string& key : keys) {
    std::vector<double> values;
    for (const Json* p : params)
      if (p && p->is_object() && p->contains(key) && (*p)[key].is_number_float())
        values.push_back((*p)[key].get<double>());
    if (!values.empty()) digits[key] = distinguishing_digits(values);
  }
  return digits;
}

std::vector<std::string> progress_table(const ProgressView& view, TerminalSize size) {
  std::vector<std::string> lines;
  if (size.columns < 2) return lines;
  // Strictly shorter than the terminal: a character in the last column may wrap the line.
  const auto width = static_cast<std::size_t>(size.columns - 1);
  // The cursor ends on the line under the table, and one line of what scrolled by stays in view.
  const auto max_lines = static_cast<std::size_t>(std::max(size.rows - 2, 1));

  lines = header_lines(view, width);
  if (lines.size() >= max_lines) {
    lines.resize(max_lines);
    return lines;
  }
  const std::size_t budget = max_lines - lines.size() - 1;  // below the best line

  // Rows first: which trials are shown decides the digits their parameters need.
  std::vector<const RunningTrial*> running;
  std::size_t used = 0;
  const std::size_t n_running = view.running.size();
  if (n_running > 0 && budget > 0) {
    std::size_t shown = 0;
    if (n_running + 1 <= budget)
      shown = n_running;
    else if (budget >= 3)
      shown = budget - 2;  // the column header, `shown` rows, "... and N more running"
    for (std::size_t i = 0; i < shown; ++i) running.push_back(&view.running[i]);
    used = shown == n_running ? shown + 1 : shown > 0 ? shown + 2 : 1;
  }
  std::vector<const FinishedTrial*> finished;
  if (budget >= used + 2)
    for (std::size_t i = view.finished.size() - std::min(view.finished.size(), budget - used - 1);
         i < view.finished.size(); ++i)
      finished.push_back(&view.finished[i]);

  std::vector<const Json*> shown_params;
  for (const RunningTrial* t : running) shown_params.push_back(&t->params);
  for (const FinishedTrial* t : finished) shown_params.push_back(&t->params);
  if (view.best) shown_params.push_back(&view.best->params);
  const ParamDigits digits = param_digits(view.param_keys, shown_params);

  lines.push_back(fit(best_line(view, digits), width));
  if (used > 0) {
    if (!running.empty()) {
      Table table;
      for (const RunningColumns& columns : kNarrowing) {
        table = running_table(view, running, digits, columns);
        if (table.natural_width() <= width) break;
      }
      table.render(width, lines);
    }
    if (running.size() < n_running)
      lines.push_back(
          fit(running.empty()
                  ? "(" + std::to_string(n_running) + " running)"
                  : "... and " + std::to_string(n_running - running.size()) + " more running",
              width));
  }
  if (!finished.empty()) finished_table(view, finished, digits).render(width, lines);
  return lines;
}

}  // namespace sweep::run
