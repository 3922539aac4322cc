/*
 * job_attempts.cpp — see job_attempts.h.
 */
#include "sweep/queue/job_attempts.h"

#include <algorithm>

namespace sweep::queue {

std::int64_t trial_attempt_limit(const JobRow& job) {
  return job.target.trial_crash_limit > 0 ? job.target.trial_crash_limit
                                          : std::max<std::int64_t>(1, job.max_attempts - 1);
}

std::int64_t attempt_number(const JobRow& job) {
  // Store::release_job grows max_attempts by one per clean hand-back; submit set it to limit + 1.
  const std::int64_t hand_backs =
      std::max<std::int64_t>(0, job.max_attempts - (trial_attempt_limit(job) + 1));
  return std::max<std::int64_t>(0, job.attempts - hand_backs);
}

std::string attempt_text(const JobRow& job) {
  const std::int64_t attempt = attempt_number(job);
  std::string text = "attempt " + std::to_string(attempt);
  // A queued job's claims all ended; a running one's latest is still going.
  std::int64_t lost = 0;
  if (job.state == JobState::queued) lost = attempt;
  if (job.state == JobState::running) lost = attempt - 1;
  if (lost > 0)
    text += " (" + std::to_string(lost) + (lost == 1 ? " worker" : " workers") +
            " lost; a trial that kills its worker " + std::to_string(trial_attempt_limit(job)) +
            " times is failed)";
  return text;
}

}  // namespace sweep::queue
