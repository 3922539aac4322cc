/*
 * tsan_suppressions.cpp — built into every executable of a SWEEP_SANITIZE=thread build
 * (CMakeLists.txt), so that every way of running them (ctest, run-tests, by hand, the sweep
 * binary the queue tests start) reports the same races.
 *
 * oneTBB is not built with ThreadSanitizer. Its arenas, tasks and per-thread data live in its own
 * pools (libtbbmalloc), which hand memory from one thread to another through synchronisation
 * ThreadSanitizer cannot see, so TBB's own writes into reused memory (the memset of a new arena's
 * slots; seen in TrainArray.*, where members' backends are built on several threads) read as races
 * between unrelated threads. `called_from_lib` ignores only the calls libtbb makes itself; our code
 * inside a TBB body or an arena is still checked (a deliberate race in a parallel_for body run in
 * two arenas at once is still reported with it).
 */
extern "C" const char* __tsan_default_suppressions() { return "called_from_lib:libtbb.so\n"; }
