/*
 * checkpoint.h — one file holding everything needed to continue a training run bit for bit, and
 * whose run it is.
 *
 * Layout (little-endian, this machine's float format): a header (magic "SWEEPCKP", version, the
 * sizes of the six arrays, the identity of the trial that wrote it — sweep name, trial number,
 * hash of its resolved config — and the run's checks: seed, batch size, training-set size), the
 * loop counters (LoopState, field by field), then params, batch-norm state, optimizer state1 /
 * state2, the best params / state copies, and a CRC-32 of everything before it. Files are written
 * atomically (tmp file, fsync, rename, fsync of the directory): a crash leaves the old checkpoint
 * or the new one, never half of one.
 *
 * The decision on files without an identity (versions 1 and 2, written before checkpoints carried
 * one): they are still read, and a run resumes from one when its own checks (seed, batch size,
 * training-set size, every array's size) pass. They can only have been written by an older sweep
 * into the trial's own directory, and refusing them would throw away every interrupted trial's
 * progress across an upgrade. The caller says in the trial's log that the identity was not
 * checked.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/check.h"
#include "trainer/loop_state.h"

namespace sweep::trainer {

// Whose checkpoint it is: a trial of a sweep. A run outside any sweep (the trainer used alone)
// has the empty identity, and reads only files of the empty identity.
struct CheckpointIdentity {
  std::string sweep;              // the sweep's name; "" outside a sweep
  std::int64_t trial = -1;        // the trial's number; -1 outside a sweep
  std::uint64_t config_hash = 0;  // of the trial's resolved config (sweep/run/trial_identity.h)
  bool operator==(const CheckpointIdentity&) const = default;
};
// The longest sweep name a checkpoint holds (a reader refuses a file that claims more).
inline constexpr std::uint32_t kMaxCheckpointNameBytes = 4096;

struct CheckpointData {
  // The trial that wrote it; nullopt for a file of version 1 or 2 (see the decision above).
  std::optional<CheckpointIdentity> identity;
  // The run's checks; resume refuses a checkpoint whose values differ from the run's.
  std::uint64_t seed = 0;
  std::int64_t batch_size = 0;
  std::int64_t train_size = 0;

  LoopState loop;
  std::vector<float> params, state, optimizer_state1, optimizer_state2, best_params, best_state;
};

// Why a checkpoint cannot be used: it cannot be read, or it is not this run's. what() names the
// file and the reason.
class CheckpointError : public Error {
 public:
  using Error::Error;
};
// Missing, cut short, corrupt (checksum, an impossible value), not a checkpoint, another version.
class CheckpointUnreadable : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};
// Whole, but another trial's or another run's (identity, seed, sizes).
class CheckpointRefused : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

// Writes atomically, with data.identity (the empty identity when it has none). Throws
// sweep::CallError / sweep::Error naming the path on failure.
void write_checkpoint(const std::string& path, const CheckpointData& data);

// Throws CheckpointUnreadable naming the file for a missing, truncated, corrupt (checksum, a
// counter below zero, a flag other than 0 or 1) or foreign (bad magic, other version) file.
CheckpointData read_checkpoint(const std::string& path);

// Throws CheckpointRefused naming the file, whose trial and whose trial this is, when `data`
// carries an identity other than `mine`. A file without an identity passes (versions 1 and 2).
void check_checkpoint_identity(const std::string& path, const CheckpointData& data,
                               const CheckpointIdentity& mine);

// Throws CheckpointRefused naming the file when `data` was not written by a run with these
// checks and these buffer sizes.
void check_checkpoint_matches(const std::string& path, const CheckpointData& data,
                              std::uint64_t seed, std::int64_t batch_size, std::int64_t train_size,
                              std::size_t param_count, std::size_t state_count,
                              std::size_t optimizer_state1, std::size_t optimizer_state2);

// Moves an unusable checkpoint out of the way and keeps it beside its place: PATH.unreadable-N
// for a CheckpointUnreadable, PATH.foreign-N for a CheckpointRefused, N the first number free.
// Returns the new path; throws sweep::Error naming both paths when the rename fails.
std::string set_aside_checkpoint(const std::string& path, const CheckpointError& why);

}  // namespace sweep::trainer
