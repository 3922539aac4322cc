/*
 * terminal_size.cpp — TIOCGWINSZ, then COLUMNS / LINES, then 80 x 24.
 */
#include "sweep/run/terminal_size.h"

#include <sys/ioctl.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace sweep::run {

namespace {

// A positive whole number from the environment, or 0 (unset, empty, text, a 0).
int positive_from_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return 0;
  const std::string_view view(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  return ec == std::errc() && end == view.data() + view.size() && value > 0 ? value : 0;
}

}  // namespace

TerminalSize terminal_size(int fd) {
  TerminalSize size;
  winsize window{};
  if (::ioctl(fd, TIOCGWINSZ, &window) == 0 && window.ws_col > 0) {
    size.columns = window.ws_col;
    if (window.ws_row > 0) size.rows = window.ws_row;
    return size;
  }
  if (const int columns = positive_from_env("COLUMNS"); columns > 0) size.columns = columns;
  if (const int rows = positive_from_env("LINES"); rows > 0) size.rows = rows;
  return size;
}

}  // namespace sweep::run
