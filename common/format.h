/*
 * format.h — how sweep writes values for people: the one place for text shown on a terminal.
 *
 * printable(): user text (a sweep name, a parameter value, a line an external trainer printed)
 * is echoed into messages and tables; raw control bytes in it (ESC, BEL, a carriage return)
 * would move the cursor, recolour or clear the user's terminal. They are shown as \xNN instead;
 * UTF-8 letters pass unchanged.
 *
 *   std::cerr << "no sweep named '" << sweep::printable(name) << "'\n";
 */
#pragma once

#include <string>
#include <string_view>

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

}  // namespace sweep
