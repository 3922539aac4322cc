/*
 * terminal_text.h — text measured in terminal columns, for lines that must never reach the
 * terminal's last column (a line the terminal wraps takes two rows, and the live table's
 * cursor-up arithmetic would then erase the wrong rows).
 *
 * A column is one UTF-8 character (East Asian wide characters, which take two, are counted as
 * one). Text passed here has been through printable(): no control bytes.
 *
 *   fit("learning_rate=0.0031622776601683794", 20)  → "learning_rate=0.0..."
 *   wrap_words("trial 3 failed: out of memory", 16)  → {"trial 3 failed:", "  out of memory"}
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::run {

// Columns `text` takes.
std::size_t display_width(std::string_view text);

// `text` in at most `width` columns: as it is when it fits, else cut with "..." at the end.
std::string fit(std::string_view text, std::size_t width);

// `text` padded with spaces on the right (left = false) or left to `width` columns.
std::string pad(std::string_view text, std::size_t width, bool left = false);

// `text` as lines of at most `width` columns, broken at spaces; lines after the first start with
// `indent`. A word longer than a line is cut with fit().
std::vector<std::string> wrap_words(std::string_view text, std::size_t width,
                                    std::string_view indent = "  ");

}  // namespace sweep::run
