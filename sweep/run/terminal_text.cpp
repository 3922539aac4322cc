/*
 * terminal_text.cpp — UTF-8 aware measuring, cutting and breaking of lines.
 */
#include "sweep/run/terminal_text.h"

#include <algorithm>

namespace sweep::run {

namespace {

constexpr std::string_view kEllipsis = "...";

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xc0) == 0x80; }

// The byte length of the longest start of `text` that takes at most `columns` columns.
std::size_t bytes_for_columns(std::string_view text, std::size_t columns) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (continuation_byte(text[i])) continue;
    if (used == columns) return i;
    ++used;
  }
  return text.size();
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (const char c : text) width += continuation_byte(c) ? 0 : 1;
  return width;
}

std::string fit(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width <= kEllipsis.size()) return std::string(text.substr(0, bytes_for_columns(text, width)));
  std::string out(text.substr(0, bytes_for_columns(text, width - kEllipsis.size())));
  return out += kEllipsis;
}

std::string pad(std::string_view text, std::size_t width, bool left) {
  const std::size_t used = display_width(text);
  const std::string fill(used < width ? width - used : 0, ' ');
  return left ? fill + std::string(text) : std::string(text) + fill;
}

std::vector<std::string> wrap_words(std::string_view text, std::size_t width,
                                    std::string_view indent) {
  std::vector<std::string> lines;
  std::string line;
  bool has_word = false;  // the line holds a word besides its indent
  std::size_t start = 0;
  while (start <= text.size()) {
    // Split at every space, so two spaces in a row stay two within a line.
    const std::size_t end = std::min(text.find(' ', start), text.size());
    const std::string_view word = text.substr(start, end - start);
    if (has_word && display_width(line) + 1 + display_width(word) > width) {
      lines.push_back(fit(line, width));
      line = std::string(indent);
      has_word = false;
    }
    if (has_word) line += ' ';
    line += word;
    has_word = true;
    start = end + 1;
  }
  lines.push_back(fit(line, width));
  return lines;
}

}  // namespace sweep::run
