/*
 * utf8.h — text that must be UTF-8: what a config holds, and what an external trainer prints
 * once it leaves the trial's own log file (metric names, log lines, the stderr that explains a
 * failure). JSON (the store's summaries, `sweep export --format json`, the report) cannot hold
 * other bytes: nlohmann's dump throws on them.
 *
 *   valid_utf8("loss \xff")  // "loss \xEF\xBF\xBD" (U+FFFD, as Python's errors="replace")
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sweep {

// The offset of the first byte of `text` that is not valid UTF-8 (a stray continuation byte, a
// truncated sequence, an overlong form, a surrogate, a code point past U+10FFFF), or npos.
inline std::size_t invalid_utf8_at(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The sequence's length and the range its second byte must fall in (RFC 3629's table, which
    // rules out overlong forms, surrogates and code points past U+10FFFF).
    std::size_t length = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size()) return i;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (std::size_t k = 2; k < length; ++k)
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return i;
    i += length;
  }
  return std::string::npos;
}

// `text` with each byte that does not start a valid UTF-8 sequence replaced by U+FFFD.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  for (std::size_t bad; (bad = invalid_utf8_at(text)) != std::string_view::npos;) {
    out.append(text.substr(0, bad));
    out += "\xEF\xBF\xBD";
    text.remove_prefix(bad + 1);
  }
  out.append(text);
  return out;
}

}  // namespace sweep
