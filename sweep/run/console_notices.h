/*
 * console_notices.h — lines for the sweep's console from a trial's own thread ("trial 3: its
 * checkpoint ... set aside").
 *
 * A trial's function is made (plan_trials) before the console that shows the run exists, and may
 * outlive it in a copy: it holds this board instead, which the run loop points at its console
 * while trials run. A line said while no console is attached (nothing trains then) is dropped.
 */
#pragma once

#include <mutex>
#include <string>

namespace sweep::run {

class ConsoleProgress;

class ConsoleNotices {
 public:
  // Prints `line` above the live table (ConsoleProgress::note) while a console is attached.
  void say(const std::string& line);

  // Points the board at `console` for the guard's life.
  class Attached {
   public:
    Attached(ConsoleNotices& board, ConsoleProgress& console);
    ~Attached();
    Attached(const Attached&) = delete;
    Attached& operator=(const Attached&) = delete;

   private:
    ConsoleNotices& board_;
  };

 private:
  std::mutex mutex_;
  ConsoleProgress* console_ = nullptr;  // guarded by mutex_
};

}  // namespace sweep::run
