/*
 * long_number.h — the first number in a text written with more significant digits than a table
 * shows (6: "0.0031622776601683794" is written 0.00316228), for the tests of the live table.
 */
#pragma once

#include <optional>
#include <regex>
#include <string>

namespace sweep::testing {

// The first decimal number of `text` with more than `max` significant digits, if any.
inline std::optional<std::string> long_number(const std::string& text, int max = 6) {
  static const std::regex number(R"([0-9]+\.[0-9]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number);
       it != std::sregex_iterator(); ++it) {
    std::string digits;
    for (const char c : it->str())
      if (c != '.') digits += c;
    digits.erase(0, digits.find_first_not_of('0'));
    if (static_cast<int>(digits.size()) > max) return it->str();
  }
  return std::nullopt;
}

}  // namespace sweep::testing
