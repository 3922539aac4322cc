/*
 * format.h — how sweep writes values for people: numbers, durations, parameter lists, and user
 * text on a terminal. One place, so a value reads the same in the live table, `sweep show`,
 * `sweep status`, messages and the report.
 *
 * Numbers: shortest() is the exact value ("0.1", "1e-05", reads back as the same double: configs,
 * parameters, CSV); significant() rounds to what a person compares ("0.8932": metrics in
 * tables), and distinguishing_digits() says how many digits a column of them needs (a random
 * draw's 0.0031622776601683794 reads 0.00316 beside 0.0457); fixed() lines up columns. NaN and
 * infinities are "nan", "inf", "-inf" everywhere (as Python prints them); only the YAML writer
 * spells them YAML's way (.nan).
 *
 * printable(): user text (a sweep name, a parameter value, a line an external trainer printed)
 * is echoed into messages and tables; raw control bytes in it (ESC, BEL, a carriage return)
 * would move the cursor, recolour or clear the user's terminal. They are shown as \xNN instead;
 * UTF-8 letters pass unchanged.
 *
 *   std::cerr << "no sweep named '" << sweep::printable(name) << "'\n";
 */
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace sweep {

// `text` with every ASCII control byte (0x00-0x1f but tab, and 0x7f) written as \xNN, and a
// backslash that would start such an escape left as it is. Newlines become \x0a too unless
// `keep_newlines`.
inline std::string printable(std::string_view text, bool keep_newlines = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    const bool control = c < 0x20 || c == 0x7f;
    if (!control || c == '\t' || (keep_newlines && c == '\n')) {
      out += ch;
      continue;
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

inline std::string non_finite_text(double v) {
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

// The shortest text that reads back as the same double: 0.1, 64, 1e-05.
inline std::string shortest(double v) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  return ec == std::errc() ? std::string(buffer, end) : std::string("?");
}

// `digits` significant digits (printf %g): 0.8932, 1.2e-05, 430.
inline std::string significant(double v, int digits = 4) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
  return buffer;
}

// The fewest significant digits, from `min_digits` to `max_digits`, at which significant() writes
// any two different values of `values` differently (values that differ only beyond max_digits
// stay alike): a column of random draws reads 0.00316 and 0.00317, not 17 digits each.
inline int distinguishing_digits(const std::vector<double>& values, int min_digits = 3,
                                 int max_digits = 6) {
  for (int digits = min_digits; digits < max_digits; ++digits) {
    std::map<std::string, double> seen;
    bool apart = true;
    for (const double v : values) {
      const auto [it, added] = seen.emplace(significant(v, digits), v);
      // NaN never equals itself, but all NaNs are written "nan" alike.
      apart = added || it->second == v || (std::isnan(v) && std::isnan(it->second));
      if (!apart) break;
    }
    if (apart) return digits;
  }
  return max_digits;
}

// `digits` after the point (printf %f): 0.2310, for columns that line up.
inline std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

// A duration for tables: 0m05s, 12m30s, 2h04m ("-" when unknown).
inline std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  const auto s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  return buffer;
}

// A parameter's value as the config would write it: text bare, numbers shortest (or with
// `digits` significant digits where space is short), lists and maps as JSON.
inline std::string value_text(const Json& value, int digits = 0) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float())
    return digits > 0 ? significant(value.get<double>(), digits) : shortest(value.get<double>());
  return json_text(value);
}

enum class ParamNames {
  full,        // training.learning_rate=0.01 training.batch_size=64
  last_parts,  // learning_rate=0.01 batch_size=64 (when the last parts are all different)
};

// The names shown for parameters `keys`: with ParamNames::last_parts the part after the last dot
// when those are all different, else the full names.
inline std::vector<std::string> param_labels(const std::vector<std::string>& keys,
                                             ParamNames names = ParamNames::full) {
  auto last_part = [](const std::string& name) { return name.substr(name.rfind('.') + 1); };
  bool unique = names == ParamNames::last_parts;
  for (std::size_t a = 0; unique && a < keys.size(); ++a)
    for (std::size_t b = a + 1; unique && b < keys.size(); ++b)
      unique = last_part(keys[a]) != last_part(keys[b]);
  std::vector<std::string> labels;
  for (const std::string& key : keys) labels.push_back(unique ? last_part(key) : key);
  return labels;
}

// Significant digits per parameter name, for floating-point values (distinguishing_digits);
// a name not in it is written shortest().
using ParamDigits = std::map<std::string, int>;

// "learning_rate=0.01 batch_size=64", in the parameters' order; "(base config)" when none.
inline std::string params_text(const Json& params, ParamNames names = ParamNames::full,
                               const ParamDigits& digits = {}) {
  std::vector<std::string> keys;
  for (auto it = params.begin(); it != params.end(); ++it) keys.push_back(it.key());
  const std::vector<std::string> labels = param_labels(keys, names);
  std::string text;
  std::size_t i = 0;
  for (auto it = params.begin(); it != params.end(); ++it, ++i) {
    if (!text.empty()) text += ' ';
    const auto d = digits.find(it.key());
    text += labels[i] + "=" + value_text(it.value(), d == digits.end() ? 0 : d->second);
  }
  return text.empty() ? "(base config)" : text;
}

// A parameter list after a line's text: " (learning_rate=0.01)", or " (base config)" once, not
// "((base config))", when there are none.
inline std::string in_parentheses(const std::string& params) {
  return params.starts_with('(') ? " " + params : " (" + params + ")";
}

}  // namespace sweep
