/*
 * job_log.h — the lines that open and close each attempt in a job's log (logs/STEM-job-N.log),
 * and reading that log as it grows (`sweep logs -f`).
 *
 * The decision: the log itself says where it ends. Each attempt (one worker's claim of the job)
 * opens with "== TIME: job N, attempt K, on worker OWNER" and, unless its worker dies, closes
 * with one "== job N ..." / "== TIME: job N done|failed" line, written after everything else the
 * attempt writes: the run's output, the heartbeat's "stopping" line, the job's final row. The
 * row cannot say it: `sweep cancel` makes it `cancelled` at once, while the worker is still to
 * learn of it at its next heartbeat, stop its trials and write about it; and a finished job's
 * row is written before its closing line. Nothing else in a job's log starts with "== ".
 *
 * So a follower is done once the job's row is terminal and the latest attempt it read is closed
 * (or none ever opened), or the worker of the open attempt is no longer alive: killed, it
 * writes nothing more (worker_registry.h: alive exactly while it holds its lock).
 */
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "store/records.h"

namespace sweep::queue {

// An attempt's first line in the job's log (no newline): "== TIME: job N, attempt K, on worker
// OWNER".
std::string attempt_opening(const JobRow& job, std::string_view owner, std::string_view time);
// An attempt's last line (no newline): "== job N" + rest, or "== TIME: job N" + rest with a time.
// `rest` starts with ' ' or ':' ("cancelled: ...", ": this worker lost it ...").
std::string attempt_closing(std::int64_t job_id, std::string_view rest, std::string_view time = {});

enum class AttemptMark { none, opens, closes };
// Whether one line of the log (without its newline) opens or closes an attempt of job `job_id`.
AttemptMark attempt_mark(std::string_view line, std::int64_t job_id);
// The lease owner named in an opening line; "" when it names none.
std::string attempt_owner(std::string_view opening);

// Reads a job's log as it grows. Not thread-safe: one reader.
class JobLogTail {
 public:
  JobLogTail(std::filesystem::path path, std::int64_t job_id);
  // The bytes written since the last call, as they are (a line may be cut; its rest comes next
  // time); "" when the file does not exist yet.
  std::string read_new();
  // The latest attempt read so far opened and has not closed yet.
  bool attempt_open() const { return open_; }
  // That attempt's worker (its lease owner); "" when no attempt is open.
  const std::string& open_attempt_owner() const { return owner_; }

 private:
  std::filesystem::path path_;
  std::int64_t job_id_;
  std::uint64_t offset_ = 0;
  std::string partial_line_;  // read, not yet ended by a newline
  bool open_ = false;
  std::string owner_;
};

}  // namespace sweep::queue
