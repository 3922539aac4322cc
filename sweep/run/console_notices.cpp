/*
 * console_notices.cpp — see console_notices.h. The console is called under the board's lock, so
 * a guard that detaches waits for a line being printed: the console is never used after it goes.
 */
#include "sweep/run/console_notices.h"

#include "sweep/run/console_progress.h"

namespace sweep::run {

void ConsoleNotices::say(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (console_) console_->note(line);
}

ConsoleNotices::Attached::Attached(ConsoleNotices& board, ConsoleProgress& console)
    : board_(board) {
  std::lock_guard lock(board_.mutex_);
  board_.console_ = &console;
}

ConsoleNotices::Attached::~Attached() {
  std::lock_guard lock(board_.mutex_);
  board_.console_ = nullptr;
}

}  // namespace sweep::run
