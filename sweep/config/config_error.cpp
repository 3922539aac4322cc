/*
 * config_error.cpp — formatting of problem lines. A Location prints as FILE:LINE:COL (1-based, as
 * editors and compilers count), so terminals and editors can jump to it.
 */
#include "sweep/config/config_error.h"

#include <algorithm>

namespace sweep::config {

namespace {
std::string problem_line(const Location& where, const std::string& key, const std::string& text) {
  std::string line = where.text() + ": ";
  if (!key.empty()) line += "key '" + key + "': ";
  return line + text;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) {
    if (!all.empty()) all += '\n';
    all += line;
  }
  return all;
}
}  // namespace

std::string Location::text() const {
  if (!label.empty()) return label;
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

ConfigError::ConfigError(std::vector<std::string> messages)
    : Error(join_lines(messages)), messages_(std::move(messages)) {}

void Diagnostics::error(const Location& where, const std::string& key, const std::string& text) {
  ++error_count_;
  std::string line = problem_line(where, key, text);
  const std::string drawn_place = where.drawn ? where.text() + "|" + key : std::string();
  for (Entry& entry : entries_) {
    if (entry.text == line) return;
    if (!drawn_place.empty() && entry.drawn_place == drawn_place) {
      ++entry.more_draws;
      return;
    }
  }
  if (entries_.size() >= kMaxShown) {  // a user fixes the first hundred first
    ++not_shown_;
    return;
  }
  const bool positioned = where.label.empty() && where.line > 0;
  entries_.push_back({positioned ? where.line : 0, positioned ? where.column : 0, std::move(line),
                      drawn_place, 0});
}

bool Diagnostics::has(const Location& where, const std::string& key,
                      const std::string& text) const {
  const std::string line = problem_line(where, key, text);
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& entry) { return entry.text == line; });
}

void Diagnostics::warn(const Location& where, const std::string& key, const std::string& text) {
  std::string line = where.text() + ": warning: ";
  if (!key.empty()) line += "key '" + key + "': ";
  line += text;
  if (std::find(warnings_.begin(), warnings_.end(), line) == warnings_.end())
    warnings_.push_back(std::move(line));
}

std::vector<std::string> Diagnostics::messages() const {
  std::vector<Entry> sorted = entries_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry& a, const Entry& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  std::vector<std::string> lines;
  for (Entry& entry : sorted) {
    if (entry.more_draws > 0)
      entry.text += " (and " + std::to_string(entry.more_draws) +
                    (entry.more_draws == 1 ? " more draw" : " more draws") + " like it)";
    lines.push_back(std::move(entry.text));
  }
  if (not_shown_ > 0)
    lines.push_back("... and " + std::to_string(not_shown_) + " more problems not shown");
  return lines;
}

void Diagnostics::throw_if_any() const {
  if (!empty()) throw ConfigError(messages());
}

}  // namespace sweep::config
