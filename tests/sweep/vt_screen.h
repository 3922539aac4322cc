// vt_screen.h — a small VT100 screen for tests of what `sweep run` draws on a terminal: it keeps
// the cells a terminal would show, so a test sees the screen a user sees, not the bytes.
//
// It knows printable characters (UTF-8: one column each), CR, LF (scrolls at the bottom), BS,
// TAB, ESC[nA (up), ESC[nF (up, column 0), ESC[J / ESC[0J (erase to the end of the screen),
// ESC[K (erase to the end of the line), ESC[...m (colours: ignored), and a resize, after which
// lines are re-wrapped to the new width (reflow: tmux, VTE, iTerm2, kitty, Windows Terminal) or
// cut (xterm). Any other escape sequence is recorded in `unknown`, so a test notices output it
// cannot judge.
//
// Auto-wrap is what the tests are after: a character written in the last column makes the next
// one wrap to a new row, and that row breaks the cursor-up arithmetic of a table redrawn in place.
// The table promises lines strictly shorter than the width, so every character written in the
// last column counts in `last_column_writes` (and its row is kept in `last_column_rows`).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace sweep::tty_test {

enum class OnResize { reflow, cut };

class VtScreen {
 public:
  VtScreen(int rows, int columns, OnResize on_resize = OnResize::reflow)
      : rows_(rows), columns_(columns), on_resize_(on_resize) {
    cells_.assign(static_cast<std::size_t>(rows_), blank_row());
    wrapped_.assign(static_cast<std::size_t>(rows_), false);
  }

  void feed(std::string_view bytes) {
    for (const char c : bytes) feed_byte(c);
  }
  // What a program writes to a terminal, before the terminal driver's output processing (ONLCR:
  // each \n goes out as \r\n), for output captured without a pseudo-terminal.
  void feed_written(std::string_view bytes) {
    for (const char c : bytes) {
      if (c == '\n') feed_byte('\r');
      feed_byte(c);
    }
  }

  void resize(int rows, int columns) {
    if (on_resize_ == OnResize::reflow && columns != columns_) reflow(columns);
    columns_ = columns;
    for (auto& row : cells_) row.resize(static_cast<std::size_t>(columns_), " ");
    // Fewer rows: the top ones go to the scrollback, so the cursor's row stays on screen.
    while (static_cast<int>(cells_.size()) > rows) {
      scroll_up();
      cells_.pop_back();
      wrapped_.pop_back();
      row_ = std::max(0, row_ - 1);
    }
    while (static_cast<int>(cells_.size()) < rows) {
      cells_.push_back(blank_row());
      wrapped_.push_back(false);
    }
    rows_ = rows;
    col_ = std::min(col_, columns_ - 1);
    pending_wrap_ = false;
  }

  // The screen's rows, without trailing spaces.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& row : cells_) {
      std::string line;
      for (const std::string& cell : row) line += cell;
      line.erase(line.find_last_not_of(' ') + 1);
      out.push_back(line);
    }
    return out;
  }
  std::string text() const {
    std::string out;
    for (const std::string& line : lines()) out += line + "\n";
    return out;
  }

  int columns() const { return columns_; }

  int last_column_writes = 0;
  std::vector<std::string> last_column_rows;  // the rows as they were when it happened
  std::vector<std::string> unknown;           // escape sequences this screen does not know
  // The screen as it was each time ESC[J erased part of it: what the user saw between redraws.
  std::vector<std::vector<std::string>> before_erase;
  std::vector<std::string> scrollback;  // rows scrolled off the top, oldest first

 private:
  std::vector<std::string> blank_row() const {
    return std::vector<std::string>(static_cast<std::size_t>(columns_), " ");
  }

  void scroll_up() {
    std::string line;
    for (const std::string& cell : cells_.front()) line += cell;
    line.erase(line.find_last_not_of(' ') + 1);
    scrollback.push_back(line);
    cells_.erase(cells_.begin());
    cells_.push_back(blank_row());
    wrapped_.erase(wrapped_.begin());
    wrapped_.push_back(false);
  }

  // Re-wraps every line (rows joined where the terminal wrapped them) to `columns`, keeping the
  // cursor on its character; rows beyond the screen go to the scrollback, empty rows under the
  // cursor first.
  void reflow(int columns) {
    std::vector<std::vector<std::string>> lines(1);
    int cursor_line = 0, cursor_offset = 0;
    for (int r = 0; r < rows_; ++r) {
      if (r == row_) {
        cursor_line = static_cast<int>(lines.size()) - 1;
        cursor_offset = static_cast<int>(lines.back().size()) + col_;
      }
      auto row = cells_[static_cast<std::size_t>(r)];
      if (!wrapped_[static_cast<std::size_t>(r)])
        while (!row.empty() && row.back() == " ") row.pop_back();
      lines.back().insert(lines.back().end(), row.begin(), row.end());
      if (!wrapped_[static_cast<std::size_t>(r)] && r + 1 < rows_) lines.emplace_back();
    }
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> wrapped;
    const auto width = static_cast<std::size_t>(columns);
    for (std::size_t l = 0; l < lines.size(); ++l) {
      const auto& line = lines[l];
      const std::size_t first = rows.size();
      for (std::size_t start = 0; start == 0 || start < line.size(); start += width) {
        std::vector<std::string> row(
            line.begin() + static_cast<std::ptrdiff_t>(start),
            line.begin() + static_cast<std::ptrdiff_t>(std::min(line.size(), start + width)));
        row.resize(width, " ");
        rows.push_back(std::move(row));
        wrapped.push_back(start + width < line.size());
      }
      if (static_cast<int>(l) == cursor_line) {
        row_ = static_cast<int>(first) +
               std::min(cursor_offset / columns, static_cast<int>(rows.size() - first) - 1);
        col_ = std::min(cursor_offset - (row_ - static_cast<int>(first)) * columns, columns - 1);
      }
    }
    auto blank = [](const std::vector<std::string>& row) {
      return std::all_of(row.begin(), row.end(), [](const std::string& c) { return c == " "; });
    };
    while (static_cast<int>(rows.size()) > rows_ && static_cast<int>(rows.size()) - 1 > row_ &&
           blank(rows.back())) {
      rows.pop_back();
      wrapped.pop_back();
    }
    cells_ = std::move(rows);
    wrapped_ = std::move(wrapped);
    columns_ = columns;
    while (static_cast<int>(cells_.size()) > rows_) {
      scroll_up();
      cells_.pop_back();
      wrapped_.pop_back();
      --row_;
    }
  }

  void line_feed() {
    pending_wrap_ = false;
    if (row_ + 1 < rows_)
      ++row_;
    else
      scroll_up();
  }

  void put(std::string cell) {
    if (pending_wrap_) {
      wrapped_[static_cast<std::size_t>(row_)] = true;
      col_ = 0;
      line_feed();
    }
    cells_[static_cast<std::size_t>(row_)][static_cast<std::size_t>(col_)] = std::move(cell);
    last_cell_ = {row_, col_};
    if (col_ == columns_ - 1) {
      ++last_column_writes;
      last_column_rows.push_back(lines()[static_cast<std::size_t>(row_)]);
      pending_wrap_ = true;
    } else {
      ++col_;
    }
  }

  void csi(const std::string& params, char final) {
    const int n = params.empty() ? 1 : std::max(1, std::stoi(params));
    switch (final) {
      case 'A':
      case 'F':
        row_ = std::max(0, row_ - n);
        if (final == 'F') col_ = 0;
        pending_wrap_ = false;
        return;
      case 'J':
        if (!params.empty() && params != "0") break;
        before_erase.push_back(lines());
        for (int c = col_; c < columns_; ++c) cell(row_, c) = " ";
        for (int r = row_ + 1; r < rows_; ++r) {
          cells_[static_cast<std::size_t>(r)] = blank_row();
          wrapped_[static_cast<std::size_t>(r)] = false;
        }
        return;
      case 'K':
        if (!params.empty() && params != "0") break;
        for (int c = col_; c < columns_; ++c) cell(row_, c) = " ";
        return;
      case 'm':
        return;
      default:
        break;
    }
    unknown.push_back("ESC[" + params + final);
  }

  std::string& cell(int r, int c) {
    return cells_[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
  }

  void feed_byte(char ch) {
    const auto c = static_cast<unsigned char>(ch);
    if (state_ == State::escape) {
      if (ch == '[') {
        state_ = State::csi;
        params_.clear();
      } else {
        unknown.push_back(std::string("ESC") + ch);
        state_ = State::text;
      }
      return;
    }
    if (state_ == State::csi) {
      if ((ch >= '0' && ch <= '9') || ch == ';' || ch == '?') {
        params_ += ch;
      } else {
        state_ = State::text;
        if (params_.find_first_of(";?") != std::string::npos)
          unknown.push_back("ESC[" + params_ + ch);
        else
          csi(params_, ch);
      }
      return;
    }
    if (c == 0x1b) {
      state_ = State::escape;
    } else if (ch == '\r') {
      col_ = 0;
      pending_wrap_ = false;
    } else if (ch == '\n') {
      line_feed();
    } else if (ch == '\b') {
      col_ = std::max(0, col_ - 1);
      pending_wrap_ = false;
    } else if (ch == '\t') {
      col_ = std::min(columns_ - 1, (col_ / 8 + 1) * 8);
    } else if ((c & 0xc0) == 0x80) {
      // A UTF-8 continuation byte belongs to the character written last.
      cell(last_cell_.first, last_cell_.second) += ch;
    } else if (c >= 0x20 && c != 0x7f) {
      put(std::string(1, ch));
    } else {
      unknown.push_back("control byte " + std::to_string(c));
    }
  }

  enum class State { text, escape, csi };
  int rows_, columns_;
  int row_ = 0, col_ = 0;
  bool pending_wrap_ = false;
  OnResize on_resize_;
  std::vector<bool> wrapped_;  // per row: the terminal wrapped it onto the next
  std::pair<int, int> last_cell_{0, 0};
  std::vector<std::vector<std::string>> cells_;
  State state_ = State::text;
  std::string params_;
};

}  // namespace sweep::tty_test
