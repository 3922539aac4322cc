/*
 * job_bounds.h — the bounds of the numbers `sweep submit` and `sweep wait` take (worker.h holds
 * the worker's). One place for each, used by the flags (checked as the command line is read:
 * exit 2, naming the flag) and by Queue::submit for C++ callers.
 *
 * Every number must be finite and inside its bound: a wait of -1 or NaN seconds waited for good,
 * and --max-attempts near INT_MAX overflowed the claim budget it is stored with (limit + 1).
 */
#pragma once

#include <cstdint>
#include <string>

namespace sweep::queue {

// The most times a trial may kill its worker before it is failed (--max-attempts). Each attempt
// is a worker lost and a lease waited out; more than a hundred is a crash loop, not bad luck.
inline constexpr int kMaxTrialAttempts = 100;
// The largest priority either way: 2^53, the largest whole number a double holds exactly, so
// every tool that reads the queue's numbers as doubles (JSON, Python's float) orders jobs alike.
inline constexpr std::int64_t kMaxPriority = std::int64_t(1) << 53;
// The longest `sweep wait --timeout`: a week, as worker.h's kMaxWorkerSeconds, far below where a
// steady clock's deadline overflows; 0 waits until the job ends, however long.
inline constexpr double kMaxWaitSeconds = 7 * 24 * 3600.0;

// Each returns "" for a value in bounds, else what the option takes ("expected a whole number
// from 1 to 100"), for the caller to put after the flag and the value.
std::string max_attempts_problem(int max_attempts);
std::string priority_problem(std::int64_t priority);
std::string wait_timeout_problem(double timeout_s);  // 0 = no limit

}  // namespace sweep::queue
