/*
 * config_error.h — every problem found in a config, collected, then thrown together.
 *
 * Validation never stops at the first problem: readers add one line per problem to a Diagnostics
 * (`FILE:LINE:COL: key 'training.learning_rate': must be > 0, got -0.1`) and the loader throws one
 * ConfigError holding them all, so a user fixes the whole file in one round. Lines are kept in the
 * order found and duplicates (the same bad value reached by several trials) are dropped.
 */
#pragma once

#include <string>
#include <vector>

#include "common/check.h"

namespace sweep::config {

// Where a value came from: a place in a file (1-based line and column), or a label such as
// "--set training.epochs=0" for values given on the command line.
struct Location {
  std::string file;
  int line = 0;       // 1-based; 0 = no position (then `label` or the bare file is printed)
  int column = 0;     // 1-based
  std::string label;  // used instead of file:line:col when not empty
  // A randomly drawn value: problems at the same place and key from different draws are one
  // line ("... (and 3 more draws like it)") instead of one line per trial.
  bool drawn = false;
  std::string text() const;
};

class ConfigError : public Error {
 public:
  explicit ConfigError(std::vector<std::string> messages);
  const std::vector<std::string>& messages() const noexcept { return messages_; }

 private:
  std::vector<std::string> messages_;
};

// Collects problem lines; messages() lists command-line (--set) problems first, then the file's
// in line and column order.
class Diagnostics {
 public:
  // `key` is the dotted path ("training.learning_rate"); empty for problems not tied to a key.
  void error(const Location& where, const std::string& key, const std::string& text);
  // Something that runs, but maybe not as meant (a log_uniform whose bounds look like values):
  // printed before the sweep starts, never a reason to stop.
  void warn(const Location& where, const std::string& key, const std::string& text);
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Whether error(where, key, text) was recorded already.
  bool has(const Location& where, const std::string& key, const std::string& text) const;
  bool empty() const { return entries_.empty() && not_shown_ == 0; }
  // As many problems as a user is shown: checking on would only count more (check_trials then
  // stops resolving trials, each of which would find the same problems again).
  bool full() const { return entries_.size() >= kMaxShown; }
  std::size_t size() const { return entries_.size(); }
  // Every error() call so far, repeated lines included: whether a reader found a problem, even
  // one already reported by the base config or an earlier trial.
  std::size_t error_count() const { return error_count_; }
  std::vector<std::string> messages() const;
  // Throws ConfigError when any problem was recorded.
  void throw_if_any() const;

 private:
  struct Entry {
    int line, column;
    std::string text;
    std::string drawn_place;  // location + key of a drawn value's problem, else ""
    int more_draws = 0;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> warnings_;  // "FILE:LINE:COL: warning: key 'k': text", once each
  std::size_t not_shown_ = 0;          // problems past kMaxShown, counted in one last line
  std::size_t error_count_ = 0;
  static constexpr std::size_t kMaxShown = 100;
};

}  // namespace sweep::config
