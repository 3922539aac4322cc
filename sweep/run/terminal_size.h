/*
 * terminal_size.h — the size of the terminal `sweep run` draws its live table on.
 *
 * Read again before every drawing (a few times a second), so a resized window (SIGWINCH) is
 * drawn at its new size without a signal handler: ioctl(TIOCGWINSZ) on the output's descriptor;
 * when that fails, the COLUMNS and LINES variables; else 80 x 24.
 */
#pragma once

namespace sweep::run {

struct TerminalSize {
  int columns = 80;
  int rows = 24;
};

TerminalSize terminal_size(int fd);

}  // namespace sweep::run
