/*
 * checkpoint.h — one file holding everything needed to continue a training run bit for bit.
 *
 * Layout (little-endian, this machine's float format): a header (magic "SWEEPCKP", version, the
 * sizes of the six arrays and the run's identity: seed, batch size, training-set size), the loop
 * counters (LoopState, field by field), then params, batch-norm state, optimizer state1 / state2,
 * the best params / state copies, and a CRC-32 of everything before it. Files are written
 * atomically (tmp file, fsync, rename, fsync of the directory): a crash leaves the old checkpoint
 * or the new one, never half of one.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/loop/loop_state.h"

namespace sweep::trainer {

struct CheckpointData {
  // Identity of the run; resume refuses a checkpoint whose identity differs.
  std::uint64_t seed = 0;
  std::int64_t batch_size = 0;
  std::int64_t train_size = 0;

  LoopState loop;
  std::vector<float> params, state, optimizer_state1, optimizer_state2, best_params, best_state;
};

// Writes atomically. Throws sweep::CallError / sweep::Error naming the path on failure.
void write_checkpoint(const std::string& path, const CheckpointData& data);

// Throws sweep::Error naming the file for a missing, truncated, corrupt (checksum) or foreign
// (bad magic, other version) file.
CheckpointData read_checkpoint(const std::string& path);

// Throws sweep::Error naming the file when `data` was not written by a run with this identity and
// these buffer sizes.
void check_checkpoint_matches(const std::string& path, const CheckpointData& data,
                              std::uint64_t seed, std::int64_t batch_size, std::int64_t train_size,
                              std::size_t param_count, std::size_t state_count,
                              std::size_t optimizer_state1, std::size_t optimizer_state2);

}  // namespace sweep::trainer
