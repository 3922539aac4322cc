/*
 * crash_recovery.h — what a worker does to a job's sweep before it continues a job whose previous
 * worker died.
 *
 * A trial still `running` in the sweep database at that moment was running when its worker died
 * (a clean stop ends trials `interrupted`). The store counts a trial's attempts (one per claim),
 * so a trial found running that has already been claimed `trial_attempt_limit` times is taken to
 * be what kills its worker: it is marked failed, and the rest of the sweep goes on without it.
 * The others go back to the queue by resume_sweep and continue from their last checkpoint.
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

namespace sweep::queue {

struct RecoveryReport {
  int resumed = 0;  // trials found running that will continue from their checkpoint
  int failed = 0;   // trials found running that used up their attempts
};

RecoveryReport recover_crashed_trials(const std::filesystem::path& sweep_db,
                                      const std::string& sweep_name,
                                      std::int64_t trial_attempt_limit, std::ostream& log);

}  // namespace sweep::queue
