/*
 * job_bounds.cpp — see job_bounds.h.
 */
#include "sweep/queue/job_bounds.h"

#include <cmath>

#include "common/format.h"
#include "sweep/queue/worker.h"

namespace sweep::queue {

static_assert(kMaxWaitSeconds == kMaxWorkerSeconds, "one longest time for every queue flag");

std::string max_attempts_problem(int max_attempts) {
  if (max_attempts >= 1 && max_attempts <= kMaxTrialAttempts) return "";
  return "expected a whole number of attempts from 1 to " + std::to_string(kMaxTrialAttempts) +
         " (a trial that kills its worker this many times is failed)";
}

std::string priority_problem(std::int64_t priority) {
  if (priority >= -kMaxPriority && priority <= kMaxPriority) return "";
  return "expected a whole number from -" + std::to_string(kMaxPriority) + " to " +
         std::to_string(kMaxPriority) + " (2^53)";
}

std::string wait_timeout_problem(double timeout_s) {
  if (std::isfinite(timeout_s) && timeout_s >= 0 && timeout_s <= kMaxWaitSeconds) return "";
  return "expected seconds from 0 (0: wait until the job ends), at most " +
         shortest(kMaxWaitSeconds) + " (a week)";
}

}  // namespace sweep::queue
